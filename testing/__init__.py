"""The test harness: live daphne servers, team workers, fakes of outside services, the TypeScript SDK's
and the model API's stand-ins, the migration checks. Public names; the tests and bench/ import them."""

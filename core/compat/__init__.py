"""Every private internal of a library we rely on, one module per library (issue 28).

Each is used for a measured reason, given in its module; core/tests/test_compat.py pins what each
assumes, so that an upgrade of the library fails there first, by name, rather than somewhere
in a wait or a push.
"""

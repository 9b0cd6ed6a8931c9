// An OpenID provider for the sign-in tests: panva's oidc-provider (the certified one many IdPs build on),
// with its dev interactions (any login, any password). The test says, in IDP_CONFIG (JSON): the port, the
// client (id, secret, redirect and post-logout addresses) and the people (login -> claims, groups among them).
// IDP_CLOCK_OFFSET_SECONDS moves this provider's clock, to show a server what clock skew looks like.
import Provider from 'oidc-provider';

const config = JSON.parse(process.env.IDP_CONFIG);
const offset = Number(process.env.IDP_CLOCK_OFFSET_SECONDS || 0) * 1000;
if (offset) {
  const realNow = Date.now;
  Date.now = () => realNow() + offset;
}
const issuer = `http://127.0.0.1:${config.port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: config.client_id,
    client_secret: config.client_secret,
    redirect_uris: config.redirect_uris,
    post_logout_redirect_uris: config.post_logout_redirect_uris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  async findAccount(ctx, id) {
    const person = config.people[id] || { email: `${id}@acme.example` };
    return {
      accountId: id,
      async claims() {
        return { sub: `acme|${id}`, email_verified: true, ...person };
      },
    };
  },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    groups: ['groups'],
  },
  scopes: ['openid', 'email', 'profile', 'groups'],
  // The ID token carries the claims asked for, as Okta's and Entra's do for groups; userinfo has them too.
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  pkce: { required: () => true },
  cookies: { keys: ['hookbridge-test-idp-cookie-key'] },
  ttl: { IdToken: 600, AccessToken: 600, AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600 },
});
provider.on('server_error', (ctx, error) => console.error('server_error', error));
provider.listen(config.port, '127.0.0.1', () => {
  console.log(`ready ${issuer}`);
});

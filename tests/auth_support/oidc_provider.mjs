// An OAuth 2.1 authorization server for the tests: the npm package oidc-provider, configured
// for what MCP needs. Usage: node oidc_provider.mjs CONFIG.json
//
// CONFIG.json: {"port": N, "jwks": {"keys": [...private JWKs...]},
//               "clients": [...client metadata...], "scopes": ["mcp:tools", ...],
//               "accessTokenTTL": SECONDS (optional, default 300)}
// Prints "listening <issuer>" on stdout once it accepts connections; listens on 127.0.0.1
// only. Enabled: PKCE (required), dynamic client registration, resource indicators (access
// tokens for a resource are JWTs with that resource as audience, opaque ones for resources
// under /opaque/), DPoP, client credentials,
// introspection and revocation, refresh tokens for clients registered for them, and the
// development login pages (for interactive flows).
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;
const scopes = config.scopes ?? ['mcp:tools'];

const provider = new Provider(issuer, {
  clients: config.clients ?? [],
  jwks: config.jwks,
  scopes: ['openid', 'offline_access', ...scopes],
  pkce: { required: () => true },
  // Plain OAuth 2.1: a refresh token for every client registered for the refresh_token
  // grant (the default also wants offline_access, which OIDC keeps only with
  // prompt=consent).
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  clientBasedCORS: () => true,
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    registration: { enabled: true },
    dPoP: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => (oneOf ? oneOf[0] : undefined),
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: scopes.join(' '),
        audience: resourceIndicator,
        accessTokenTTL: config.accessTokenTTL ?? 300,
        // Resources whose path starts with /opaque/ get opaque tokens (for introspection).
        accessTokenFormat: new URL(resourceIndicator).pathname.startsWith('/opaque/')
          ? 'opaque'
          : 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
provider.proxy = false;

const server = provider.listen(config.port, '127.0.0.1', () => {
  process.stdout.write(`listening ${issuer}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

/**
 * Where an authorization server's metadata may be (RFC 8414 §3.1, OpenID Connect Discovery §4), in
 * the order MCP clients try them: the OAuth location with the issuer's path after the well-known
 * part, then for an issuer with a path the OpenID location inserted the same way, then OpenID's
 * appended. Shared by pactum as a resource server (finding an external issuer's keys) and by the
 * conformance runner (checking a target's discovery as a client would).
 */
export function authorizationServerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    ...(path ? [`${url.origin}/.well-known/openid-configuration${path}`] : []),
    `${url.origin}${path}/.well-known/openid-configuration`,
  ];
}

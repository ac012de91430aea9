import { SELF } from "cloudflare:test";
import {
  Client,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  StreamableHTTPClientTransport,
  type OAuthClientProvider,
} from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { createTenant } from "./helpers";

const MCP_URL = "https://vigil.test/v1/mcp";
const REVISIONS = [
  { revision: "2025-11-25", versionNegotiation: { mode: "legacy" as const } },
  { revision: "2026-07-28", versionNegotiation: { mode: { pin: "2026-07-28" } } },
];

/** SELF.fetch, remembering every path the client asked for. */
function recordingFetch(seen: string[]) {
  return (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    seen.push(`${init?.method ?? "GET"} ${new URL(url).pathname}`);
    return SELF.fetch(url, init);
  };
}

/** An OAuth-capable client's provider, as the MCP Inspector has: it would start a flow if discovery offered one. */
function oauthProvider(started: string[]): OAuthClientProvider {
  return {
    get redirectUrl() {
      return "http://127.0.0.1:6274/oauth/callback";
    },
    get clientMetadata() {
      return { redirect_uris: ["http://127.0.0.1:6274/oauth/callback"], client_name: "inspector-like" };
    },
    clientInformation: () => undefined,
    saveClientInformation: () => void started.push("saveClientInformation"),
    tokens: () => undefined,
    saveTokens: () => void started.push("saveTokens"),
    redirectToAuthorization: (url: URL) => void started.push(`redirect ${url.href}`),
    saveCodeVerifier: () => void started.push("saveCodeVerifier"),
    codeVerifier: () => "",
  } as OAuthClientProvider;
}

describe("MCP discovery says there is no OAuth", () => {
  it("answers 404 problem+json on every well-known OAuth metadata URL, with or without a credential", async () => {
    const paths = [
      "/.well-known/oauth-protected-resource/v1/mcp",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-authorization-server/v1/mcp",
      "/.well-known/openid-configuration",
      "/.well-known/openid-configuration/v1/mcp",
      "/v1/mcp/.well-known/openid-configuration",
    ];
    for (const path of paths) {
      for (const headers of [{}, { authorization: "Bearer vk_wrong" }] as Record<string, string>[]) {
        const res = await SELF.fetch(`https://vigil.test${path}`, { headers });
        expect(res.status, path).toBe(404);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect(((await res.json()) as { code: string }).code).toBe("not_found");
      }
    }
  });

  for (const { revision, versionNegotiation } of REVISIONS) {
    it(`the official SDK's discovery finds no OAuth metadata (protocol ${revision})`, async () => {
      const seen: string[] = [];
      const fetchFn = recordingFetch(seen);
      await expect(discoverOAuthProtectedResourceMetadata(MCP_URL, { protocolVersion: revision }, fetchFn)).rejects.toThrow(/does not implement OAuth 2.0 Protected Resource Metadata/);
      await expect(discoverAuthorizationServerMetadata("https://vigil.test/", { fetchFn, protocolVersion: revision })).resolves.toBeUndefined();
      expect(seen.length).toBeGreaterThan(1);
    });

    it(`a plain SDK client with a wrong key fails with the 401 (protocol ${revision})`, async () => {
      const seen: string[] = [];
      const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { requestInit: { headers: { authorization: "Bearer vk_wrong" } }, fetch: recordingFetch(seen) });
      const client = new Client({ name: "plain", version: "1.0.0" }, { versionNegotiation });
      const error = await client.connect(transport).then(() => null, (e: unknown) => e as Error);
      expect(error?.message).toMatch(/401|nauthorized/);
      expect(seen.every((entry) => entry === "POST /v1/mcp")).toBe(true);
    });

    it(`an OAuth-capable SDK client with a wrong key finds no OAuth and never sends the person to authorize (protocol ${revision})`, async () => {
      const seen: string[] = [];
      const started: string[] = [];
      const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
        requestInit: { headers: { authorization: "Bearer vk_wrong" } },
        authProvider: oauthProvider(started),
        fetch: recordingFetch(seen),
      });
      const client = new Client({ name: "inspector-like", version: "1.0.0" }, { versionNegotiation });
      const error = await client.connect(transport).then(() => null, (e: unknown) => e as Error);
      // Without metadata the SDK tries registration at the default /register: it too says there is no OAuth.
      expect(error?.message).toMatch(/no OAuth metadata/);
      expect(started).toEqual([]);
      expect(seen.filter((entry) => /\/(authorize|token)$/.test(entry))).toEqual([]);
      expect(seen.some((entry) => entry.startsWith("POST /v1/mcp"))).toBe(true);
    });

    it(`the same client with a valid key connects and lists the tools (protocol ${revision})`, async () => {
      const { key } = await createTenant("mcp-discovery");
      const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
        fetch: recordingFetch([]),
      });
      const client = new Client({ name: "inspector-like", version: "1.0.0" }, { versionNegotiation });
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion?.() ?? revision).toBe(revision);
      expect((await client.listTools()).tools.length).toBe(6);
      await client.close();
    });
  }
});

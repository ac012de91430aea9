import { describe, expect, it } from "vitest";
import { checkEgress, checkUrlShape } from "../../src/core/egress";

describe("egress rule", () => {
  it("allows https to a listed host only", () => {
    const policy = { allowedHosts: ["tools.example.com"], allowLoopbackHttp: false };
    expect(checkEgress("https://tools.example.com/crm?x=1", policy).ok).toBe(true);
    expect(checkEgress("https://evil.example.com/crm", policy)).toMatchObject({ ok: false, code: "network_denied" });
    expect(checkEgress("https://tools.example.com:8443/crm", policy)).toMatchObject({ ok: false, code: "network_denied" });
  });

  it("allows plain http only to loopback and only when the deployment allows it", () => {
    expect(checkUrlShape("http://127.0.0.1:9000/hook", true).ok).toBe(true);
    expect(checkUrlShape("http://localhost:9000/hook", true).ok).toBe(true);
    expect(checkUrlShape("http://127.0.0.1:9000/hook", false)).toMatchObject({ ok: false, code: "network_denied" });
    expect(checkUrlShape("http://example.com/hook", true)).toMatchObject({ ok: false, code: "network_denied" });
  });

  it("refuses credentials, other schemes and relative URLs", () => {
    expect(checkUrlShape("https://user:pw@tools.example.com/", false).ok).toBe(false);
    expect(checkUrlShape("ftp://tools.example.com/", false).ok).toBe(false);
    expect(checkUrlShape("/relative", false).ok).toBe(false);
  });
});

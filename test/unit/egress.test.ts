import { describe, expect, it } from "vitest";
import { deploymentMode } from "../../src/core/egress/deployment-mode";
import { checkEgress, checkUrlShape, targetClass } from "../../src/core/egress/egress";

describe("egress rule", () => {
  it("allows https to a listed host only", () => {
    const policy = { allowedHosts: ["tools.example.com"], mode: "deployed" as const };
    expect(checkEgress("https://tools.example.com/crm?x=1", policy).ok).toBe(true);
    expect(checkEgress("https://evil.example.com/crm", policy)).toMatchObject({ ok: false, code: "network_denied" });
    expect(checkEgress("https://tools.example.com:8443/crm", policy)).toMatchObject({ ok: false, code: "network_denied" });
  });

  it("deny by default in local mode too: a loopback host must still be on the allowlist", () => {
    expect(checkEgress("http://127.0.0.1:9000/hook", { allowedHosts: ["127.0.0.1:9001"], mode: "local" })).toMatchObject({ ok: false, code: "network_denied" });
    expect(checkEgress("http://127.0.0.1:9000/hook", { allowedHosts: ["127.0.0.1:9000"], mode: "local" }).ok).toBe(true);
  });

  it("local mode: plain http to loopback and private targets, https anywhere, never http to a public host", () => {
    for (const url of ["http://127.0.0.1:9000/hook", "http://localhost:11434/v1", "http://[::1]:8000/", "http://10.0.0.5/", "http://192.168.1.2:1234/", "http://172.20.0.3/", "http://ollama:11434/v1", "http://nas.local/", "http://169.254.10.1/"]) {
      expect(checkUrlShape(url, "local"), url).toMatchObject({ ok: true });
    }
    expect(checkUrlShape("https://api.example.com/", "local").ok).toBe(true);
    const publicHttp = checkUrlShape("http://example.com/hook", "local");
    expect(publicHttp).toMatchObject({ ok: false, code: "network_denied" });
    expect(!publicHttp.ok && publicHttp.message).toMatch(/local mode/);
  });

  it("deployed mode: https only, and never a loopback, private or link-local target, whatever the spelling", () => {
    for (const url of [
      "https://127.0.0.1/", "https://localhost/", "https://app.localhost/", "https://[::1]/", "https://10.1.2.3/", "https://172.16.0.1/", "https://192.168.0.1/",
      "https://169.254.169.254/latest/meta-data", "https://[fe80::1]/", "https://[fd00::1]/", "https://[::ffff:127.0.0.1]/", "https://[::ffff:a9fe:a9fe]/",
      "https://0x7f.1/", "https://2130706433/", "https://0.0.0.0/", "https://100.64.0.1/", "https://internal-api/", "https://db.internal/",
    ]) {
      const check = checkUrlShape(url, "deployed");
      expect(check, url).toMatchObject({ ok: false, code: "network_denied" });
      expect(!check.ok && check.message, url).toMatch(/deployed mode/);
    }
    const plain = checkUrlShape("http://api.example.com/", "deployed");
    expect(!plain.ok && plain.message).toMatch(/plain http is not allowed in deployed mode/);
    expect(checkUrlShape("https://api.example.com/", "deployed").ok).toBe(true);
    expect(checkUrlShape("https://8.8.8.8/", "deployed").ok).toBe(true);
    expect(checkUrlShape("https://[2606:4700::1111]/", "deployed").ok).toBe(true);
  });

  it("classifies targets by range", () => {
    expect(targetClass("127.8.9.10")).toBe("loopback");
    expect(targetClass("169.254.0.1")).toBe("link_local");
    expect(targetClass("[fe80::abcd]")).toBe("link_local");
    expect(targetClass("172.32.0.1")).toBe("public");
    expect(targetClass("api.openai.com")).toBe("public");
  });

  it("refuses credentials, other schemes and relative URLs in both modes", () => {
    for (const mode of ["local", "deployed"] as const) {
      expect(checkUrlShape("https://user:pw@tools.example.com/", mode).ok).toBe(false);
      expect(checkUrlShape("ftp://tools.example.com/", mode).ok).toBe(false);
      expect(checkUrlShape("file:///etc/passwd", mode).ok).toBe(false);
      expect(checkUrlShape("/relative", mode).ok).toBe(false);
    }
  });

  it("reads the mode strictly: only the exact value 'local' is local", () => {
    expect(deploymentMode("local")).toBe("local");
    for (const value of [undefined, "", "LOCAL", "dev", "deployed", "local "]) expect(deploymentMode(value)).toBe("deployed");
  });
});

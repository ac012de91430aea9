import { describe, expect, it } from "vitest";
import { keyringOf, keyVersion } from "../../src/core/egress/keyring";
import { MasterKeyMissingError } from "../../src/core/egress/master-key";
import { createSecretBox } from "../../src/core/egress/secret-box";

const OLD = "old-master-key-0123456789abcdefghijklmnop";
const NEW = "new-master-key-0123456789abcdefghijklmnop";

describe("master keyring", () => {
  it("names each key by its version and refuses a short previous key", () => {
    const ring = keyringOf(NEW, ` ${OLD} ,`);
    expect(ring.current.kid).toBe(keyVersion(NEW));
    expect(ring.previous.map((key) => key.kid)).toEqual([keyVersion(OLD)]);
    expect(() => keyringOf(NEW, "short")).toThrow(MasterKeyMissingError);
  });

  it("after a rotation a value sealed under the previous key opens (not current) and re-seals under the new one; without the old key it fails", async () => {
    const before = createSecretBox(OLD, "vigil/test");
    const sealed = await before.seal("sk-provider", "row-1");
    expect(sealed.startsWith(`v2.${keyVersion(OLD)}.`)).toBe(true);
    const rotated = createSecretBox(keyringOf(NEW, OLD), "vigil/test");
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(await rotated.open(sealed, "row-1")).toEqual({ ok: true, secret: "sk-provider", current: false });
    const resealed = await rotated.seal("sk-provider", "row-1");
    expect(rotated.isCurrent(resealed)).toBe(true);
    expect(await createSecretBox(NEW, "vigil/test").open(resealed, "row-1")).toEqual({ ok: true, secret: "sk-provider", current: true });
    expect(await createSecretBox(NEW, "vigil/test").open(sealed, "row-1")).toMatchObject({ ok: false, code: "secret_undecryptable" });
  });
});

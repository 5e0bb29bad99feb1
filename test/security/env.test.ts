import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { childEnvFor } from "../../src/security/env.ts";
import { PolicyError } from "../../src/security/policy.ts";

const SOURCE = { PATH: "/usr/bin", HOME: "/home/u", OPENAI_API_KEY: "sk-parent-secret", AWS_SECRET_ACCESS_KEY: "aws-secret" };
const SECRET = "value-that-must-not-leak";

describe("childEnvFor", () => {
  test("minimal base plus the resolved env; the parent's secrets stay out", () => {
    const env = childEnvFor({ name: "fs" }, { API_TOKEN: "t0ken" }, { source: SOURCE, platform: "linux" });
    assert.deepEqual(env, { PATH: "/usr/bin", HOME: "/home/u", API_TOKEN: "t0ken" });
  });

  test("explicit variables win over inherited ones", () => {
    const env = childEnvFor({ name: "fs" }, { PATH: "/opt/bin" }, { source: SOURCE, platform: "linux" });
    assert.equal(env.PATH, "/opt/bin");
  });

  test("invalid names and values are refused, naming the server and the variable only", () => {
    const cases: Record<string, string>[] = [{ "": SECRET }, { "A=B": SECRET }, { "A\0B": SECRET }, { GOOD_NAME: `${SECRET}\0` }];
    for (const bad of cases) {
      assert.throws(
        () => childEnvFor({ name: "fs" }, bad, { source: SOURCE }),
        (err: unknown) => {
          assert.ok(err instanceof PolicyError);
          assert.equal(err.code, "INVALID_ENV");
          assert.match(err.message, /^server "fs": /);
          assert.ok(!err.message.includes(SECRET), err.message);
          assert.ok(!err.message.includes("\0"));
          return true;
        },
      );
    }
  });
});

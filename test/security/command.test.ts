import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { McpServerConfig } from "../../src/config/types.ts";
import { checkCommand } from "../../src/security/command.ts";
import { PolicyError, type PolicyErrorCode } from "../../src/security/policy.ts";

let dir = "";
let bin = "";
let other = "";
let tool = "";

before(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "mcp-bridge-command-")));
  bin = join(dir, "bin");
  other = join(dir, "other");
  await mkdir(bin);
  await mkdir(other);
  tool = join(bin, "mytool");
  await writeFile(tool, "#!/bin/sh\nexit 0\n");
  await chmod(tool, 0o755);
  await writeFile(join(other, "mytool"), "#!/bin/sh\nexit 0\n");
  await chmod(join(other, "mytool"), 0o755);
  await writeFile(join(bin, "plain.txt"), "not a program\n");
  await chmod(join(bin, "plain.txt"), 0o644);
  await symlink(tool, join(bin, "linked-tool"));
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function server(command: string | undefined, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { name: "fs", transport: "stdio", command, ...extra };
}

async function refused(promise: Promise<string>, code: PolicyErrorCode): Promise<PolicyError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof PolicyError, `expected PolicyError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.server, "fs");
    assert.match(err.message, /^server "fs"/);
    return err;
  }
  assert.fail(`expected a ${code} refusal`);
}

describe("checkCommand: untrusted servers", () => {
  test("an absolute path to an executable file is returned as is", async () => {
    assert.equal(await checkCommand(server(tool, { trust: "untrusted" })), tool);
  });

  test("trust defaults to untrusted", async () => {
    const env = { PATH: bin };
    const err = await refused(checkCommand(server("mytool"), { env }), "COMMAND_NOT_ALLOWED");
    assert.match(err.message, /untrusted/);
  });

  test("a bare name not on the allow-list is refused with the way to fix it", async () => {
    const err = await refused(checkCommand(server("npx", { trust: "untrusted" })), "COMMAND_NOT_ALLOWED");
    assert.equal(
      err.message,
      'server "fs" is untrusted: command "npx" must be an absolute path or listed in allowCommands; ' +
        "mark the server trusted to allow PATH lookup",
    );
  });

  test("a relative path with a slash is refused even if the file exists", async () => {
    const err = await refused(checkCommand(server("bin/mytool"), { cwd: dir }), "COMMAND_NOT_ALLOWED");
    assert.match(err.message, /relative path/);
    await refused(checkCommand(server("./bin/mytool"), { cwd: dir }), "COMMAND_NOT_ALLOWED");
  });

  test("a missing absolute path is refused before spawning", async () => {
    const err = await refused(checkCommand(server(join(bin, "nope"))), "COMMAND_NOT_FOUND");
    assert.match(err.message, /does not exist/);
  });

  test("a file without execute permission is refused", async () => {
    const err = await refused(checkCommand(server(join(bin, "plain.txt"))), "COMMAND_NOT_EXECUTABLE");
    assert.match(err.message, /not executable/);
  });

  test("a directory is refused", async () => {
    const err = await refused(checkCommand(server(bin)), "COMMAND_NOT_FOUND");
    assert.match(err.message, /not a regular file/);
  });

  test("a symlink to an executable file is accepted", async () => {
    assert.equal(await checkCommand(server(join(bin, "linked-tool"))), join(bin, "linked-tool"));
  });

  test("a name on the allow-list is looked up on the child's PATH", async () => {
    const resolved = await checkCommand(server("mytool"), { allowList: ["mytool"], env: { PATH: `${bin}:${other}` } });
    assert.equal(resolved, tool);
  });

  test("an allow-listed name that PATH cannot find is reported as not found", async () => {
    const err = await refused(
      checkCommand(server("mytool"), { allowList: ["mytool"], env: { PATH: join(dir, "empty") } }),
      "COMMAND_NOT_FOUND",
    );
    assert.match(err.message, /PATH/);
  });

  test("an absolute allow-list entry admits a bare name only when PATH lands on that file", async () => {
    const allowList = [join(other, "mytool")];
    assert.equal(await checkCommand(server("mytool"), { allowList, env: { PATH: `${other}:${bin}` } }), join(other, "mytool"));
    await refused(checkCommand(server("mytool"), { allowList, env: { PATH: `${bin}:${other}` } }), "COMMAND_NOT_ALLOWED");
    await refused(checkCommand(server("mytool"), { allowList, env: { PATH: join(dir, "empty") } }), "COMMAND_NOT_ALLOWED");
  });

  test("the allow-list of one name does not admit another", async () => {
    await refused(checkCommand(server("mytool"), { allowList: ["node"], env: { PATH: bin } }), "COMMAND_NOT_ALLOWED");
  });
});

describe("checkCommand: trusted servers", () => {
  test("a bare name is looked up on PATH", async () => {
    assert.equal(await checkCommand(server("mytool", { trust: "trusted" }), { env: { PATH: `${other}:${bin}` } }), join(other, "mytool"));
  });

  test("a relative path is resolved against cwd (option, then config)", async () => {
    assert.equal(await checkCommand(server("bin/mytool", { trust: "trusted" }), { cwd: dir }), tool);
    assert.equal(await checkCommand(server("./mytool", { trust: "trusted", cwd: bin })), tool);
  });

  test("a name nowhere on PATH is refused with a hint", async () => {
    const err = await refused(checkCommand(server("mytool", { trust: "trusted" }), { env: { PATH: join(dir, "empty") } }), "COMMAND_NOT_FOUND");
    assert.match(err.message, /not found \(is it on PATH/);
  });

  test("a match that is not executable is reported as such", async () => {
    const err = await refused(checkCommand(server("plain.txt", { trust: "trusted" }), { env: { PATH: bin } }), "COMMAND_NOT_EXECUTABLE");
    assert.match(err.message, /plain\.txt/);
  });
});

describe("checkCommand: malformed commands", () => {
  test("no command at all", async () => {
    await refused(checkCommand(server(undefined)), "INVALID_COMMAND");
    await refused(checkCommand(server("", { trust: "trusted" })), "INVALID_COMMAND");
  });

  test("a NUL byte in the command is refused, for every trust level", async () => {
    await refused(checkCommand(server(`${tool}\0x`)), "INVALID_COMMAND");
    await refused(checkCommand(server("mytool\0", { trust: "trusted" }), { env: { PATH: bin } }), "INVALID_COMMAND");
  });

  test("a NUL byte in an argument is refused without echoing the argument", async () => {
    const secret = "s3cr3t-token-value";
    const err = await refused(checkCommand(server(tool, { args: ["--x", `${secret}\0`] })), "INVALID_COMMAND");
    assert.match(err.message, /argument 1 contains a NUL byte/);
    assert.ok(!err.message.includes(secret));
    assert.ok(!JSON.stringify(err.details).includes(secret));
  });
});

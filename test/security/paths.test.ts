import assert from "node:assert/strict";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { PathError, resolveWithin, type PathErrorCode } from "../../src/security/paths.ts";

// Layout (base is canonical):
//   base/root/            the root
//     a.txt  sub/b.txt
//     in-link -> sub            (inside -> inside)
//     out-dir -> base/outside   (inside -> outside, directory)
//     out-file -> base/outside/secret.txt
//     chain1 -> chain2 -> base/outside      chainin1 -> chainin2 -> sub
//     dangling -> base/nowhere   loop1 <-> loop2
//   base/outside/secret.txt
//   base/root-evil/x.txt      (shares the root's name as a prefix)
//   base/root-link -> root    (a symlinked root)
let base = "";
let root = "";

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "mcp-bridge-paths-")));
  root = join(base, "root");
  await mkdir(join(root, "sub"), { recursive: true });
  await mkdir(join(base, "outside"));
  await mkdir(join(base, "root-evil"));
  await writeFile(join(root, "a.txt"), "a");
  await writeFile(join(root, "sub", "b.txt"), "b");
  await writeFile(join(base, "outside", "secret.txt"), "secret");
  await writeFile(join(base, "root-evil", "x.txt"), "x");
  await symlink(join(root, "sub"), join(root, "in-link"));
  await symlink(join(base, "outside"), join(root, "out-dir"));
  await symlink(join(base, "outside", "secret.txt"), join(root, "out-file"));
  await symlink(join(base, "outside"), join(root, "chain2"));
  await symlink(join(root, "chain2"), join(root, "chain1"));
  await symlink("sub", join(root, "chainin2"));
  await symlink("chainin2", join(root, "chainin1"));
  await symlink(join(base, "nowhere"), join(root, "dangling"));
  await symlink(join(root, "loop2"), join(root, "loop1"));
  await symlink(join(root, "loop1"), join(root, "loop2"));
  await symlink(join(base, "root-evil"), join(root, "evil-link"));
  await symlink(root, join(base, "root-link"));
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

async function refused(userPath: string, code: PathErrorCode, from = root): Promise<PathError> {
  try {
    const got = await resolveWithin(from, userPath);
    assert.fail(`expected ${code} for ${JSON.stringify(userPath)}, got ${got}`);
  } catch (err) {
    assert.ok(err instanceof PathError, `expected PathError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assert.equal(err.path, userPath);
    return err;
  }
}

describe("resolveWithin: inside the root", () => {
  test("relative paths resolve under the root", async () => {
    assert.equal(await resolveWithin(root, "a.txt"), join(root, "a.txt"));
    assert.equal(await resolveWithin(root, "sub/b.txt"), join(root, "sub", "b.txt"));
    assert.equal(await resolveWithin(root, "."), root);
    assert.equal(await resolveWithin(root, ""), root);
  });

  test("`..` that stays inside is fine, and `..name` is a name", async () => {
    assert.equal(await resolveWithin(root, "sub/../a.txt"), join(root, "a.txt"));
    assert.equal(await resolveWithin(root, "..hidden"), join(root, "..hidden"));
  });

  test("an absolute path inside the root is accepted", async () => {
    assert.equal(await resolveWithin(root, join(root, "sub", "b.txt")), join(root, "sub", "b.txt"));
  });

  test("a missing final component is allowed, and so are missing directories", async () => {
    assert.equal(await resolveWithin(root, "new.txt"), join(root, "new.txt"));
    assert.equal(await resolveWithin(root, "sub/new/deeper/c.txt"), join(root, "sub", "new", "deeper", "c.txt"));
  });

  test("a symlink that stays inside resolves to its canonical target", async () => {
    assert.equal(await resolveWithin(root, "in-link/b.txt"), join(root, "sub", "b.txt"));
    assert.equal(await resolveWithin(root, "in-link/new.txt"), join(root, "sub", "new.txt"));
  });

  test("a chain of symlinks that stays inside is accepted", async () => {
    assert.equal(await resolveWithin(root, "chainin1/b.txt"), join(root, "sub", "b.txt"));
  });

  test("`link/..` is taken lexically, so the returned path is the checked one", async () => {
    // The kernel would resolve out-dir/../a.txt to base/a.txt; we return root/a.txt instead.
    assert.equal(await resolveWithin(root, "out-dir/../a.txt"), join(root, "a.txt"));
  });

  test("a symlinked root works, and results are under its real path", async () => {
    const linked = join(base, "root-link");
    assert.equal(await resolveWithin(linked, "a.txt"), join(root, "a.txt"));
    assert.equal(await resolveWithin(linked, join(linked, "sub", "b.txt")), join(root, "sub", "b.txt"));
    assert.equal(await resolveWithin(linked, join(root, "sub", "b.txt")), join(root, "sub", "b.txt"));
    assert.equal(await resolveWithin(linked, "missing.txt"), join(root, "missing.txt"));
    await refused("out-dir/secret.txt", "SYMLINK_ESCAPE", linked);
    await refused("../outside/secret.txt", "ESCAPES_ROOT", linked);
  });
});

describe("resolveWithin: refusals", () => {
  test("`..` escapes", async () => {
    const err = await refused("../outside/secret.txt", "ESCAPES_ROOT");
    assert.match(err.message, /leaves the root/);
    await refused("..", "ESCAPES_ROOT");
    await refused("sub/../../outside", "ESCAPES_ROOT");
    await refused("../root-evil/x.txt", "ESCAPES_ROOT");
  });

  test("absolute paths outside the root, including a sibling sharing its prefix", async () => {
    await refused(join(base, "outside", "secret.txt"), "OUTSIDE_ROOT");
    await refused(join(base, "root-evil", "x.txt"), "OUTSIDE_ROOT");
    await refused("/", "OUTSIDE_ROOT");
  });

  test("NUL bytes, in the path or the root", async () => {
    await refused("a.txt\0.png", "NUL_BYTE");
    await assert.rejects(resolveWithin(`${root}\0`, "a.txt"), { name: "PathError", code: "NUL_BYTE" });
  });

  test("a symlinked directory pointing outside, for existing and new files", async () => {
    const err = await refused("out-dir/secret.txt", "SYMLINK_ESCAPE");
    assert.match(err.message, /symlink/);
    await refused("out-dir/new.txt", "SYMLINK_ESCAPE");
    await refused("out-dir/new/deeper.txt", "SYMLINK_ESCAPE");
    await refused("out-dir", "SYMLINK_ESCAPE");
  });

  test("a symlinked file pointing outside", async () => {
    await refused("out-file", "SYMLINK_ESCAPE");
    await refused(join(root, "out-file"), "SYMLINK_ESCAPE");
  });

  test("a chain of symlinks ending outside", async () => {
    await refused("chain1/secret.txt", "SYMLINK_ESCAPE");
    await refused("in-link/../chain1/secret.txt", "SYMLINK_ESCAPE");
  });

  test("a symlink to a sibling that shares the root's name as a prefix", async () => {
    await refused("evil-link/x.txt", "SYMLINK_ESCAPE");
  });

  test("dangling and looping symlinks", async () => {
    await refused("dangling", "BROKEN_SYMLINK");
    await refused("dangling/new.txt", "BROKEN_SYMLINK");
    await refused("loop1", "BROKEN_SYMLINK");
  });

  test("a root that does not exist", async () => {
    await refused("a.txt", "ROOT_NOT_FOUND", join(base, "no-such-root"));
  });
});

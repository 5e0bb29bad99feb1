import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_MAX_NAME_LENGTH, ToolNamer, UriNamespaces, sanitizeName, stableHash } from "../../src/bridge/naming.ts";

const SAFE = /^[A-Za-z0-9_-]+$/;
const HASHED = /_[0-9a-f]{8}$/;

function tools(...names: string[]): { name: string }[] {
  return names.map((name) => ({ name }));
}

/** Asserts the general contract for every name a namer handed out for these servers. */
function assertWellFormed(namer: ToolNamer, assigned: Map<string, Map<string, string>>): void {
  const all = new Set<string>();
  for (const [server, names] of assigned) {
    for (const [tool, name] of names) {
      assert.match(name, SAFE, name);
      assert.ok(name.length <= namer.maxLength, `${name} is ${name.length} long`);
      assert.ok(!all.has(name), `duplicate bridged name ${name}`);
      all.add(name);
      assert.deepEqual(namer.resolve(name), { server, tool });
      assert.equal(namer.nameOf(server, tool), name);
    }
  }
}

describe("stableHash and sanitizeName", () => {
  it("stableHash is 32-bit FNV-1a over UTF-8, as 8 hex digits", () => {
    assert.equal(stableHash(""), "811c9dc5");
    assert.equal(stableHash("a"), "e40c292c");
    assert.equal(stableHash("foobar"), "bf9cf968");
    assert.notEqual(stableHash("é"), stableHash("e"));
  });

  it("sanitizeName replaces each code point outside [A-Za-z0-9_-] with one underscore", () => {
    assert.equal(sanitizeName("read_file-2"), "read_file-2");
    assert.equal(sanitizeName("a.b/c d"), "a_b_c_d");
    assert.equal(sanitizeName("検索𝄞"), "___");
    assert.equal(sanitizeName(""), "");
  });
});

describe("ToolNamer", () => {
  it("names tools mcp__<server>__<tool> and resolves them through the reverse map", () => {
    const namer = new ToolNamer();
    const names = namer.assign("fs", tools("read_file", "write-file"));
    assert.deepEqual([...names], [
      ["read_file", "mcp__fs__read_file"],
      ["write-file", "mcp__fs__write-file"],
    ]);
    assert.deepEqual(namer.resolve("mcp__fs__read_file"), { server: "fs", tool: "read_file" });
  });

  it("never splits a name: a well-formed but unassigned name resolves to nothing", () => {
    const namer = new ToolNamer();
    namer.assign("fs", tools("read_file"));
    assert.equal(namer.resolve("mcp__fs__delete_everything"), undefined);
    assert.equal(namer.resolve("mcp__fs__read_file "), undefined);
    // A tool whose own name contains "__" still resolves to the full original name.
    namer.assign("git", tools("log__all"));
    assert.deepEqual(namer.resolve("mcp__git__log__all"), { server: "git", tool: "log__all" });
  });

  it("a toolPrefix replaces the server name part, while resolve reports the real server", () => {
    const namer = new ToolNamer();
    const names = namer.assign("filesystem-with-long-name", tools("read"), "fs");
    assert.equal(names.get("read"), "mcp__fs__read");
    assert.deepEqual(namer.resolve("mcp__fs__read"), { server: "filesystem-with-long-name", tool: "read" });
  });

  it("a name that needed sanitising gets a stable hash suffix", () => {
    const namer = new ToolNamer();
    const name = namer.assign("fs", tools("read.file")).get("read.file")!;
    assert.equal(name, `mcp__fs__read_file_${stableHash("fs\u0000read.file")}`);
    assert.equal(new ToolNamer().assign("fs", tools("read.file")).get("read.file"), name, "same inputs, same name");
  });

  it("servers that collide after sanitising (a.b vs a_b) get distinct names whatever the order", () => {
    const forward = new ToolNamer();
    const f1 = forward.assign("a.b", tools("x"));
    const f2 = forward.assign("a_b", tools("x"));
    const backward = new ToolNamer();
    const b2 = backward.assign("a_b", tools("x"));
    const b1 = backward.assign("a.b", tools("x"));
    assert.equal(f2.get("x"), "mcp__a_b__x", "the exact spelling keeps the plain name");
    assert.match(f1.get("x")!, /^mcp__a_b__x_[0-9a-f]{8}$/);
    assert.equal(b1.get("x"), f1.get("x"));
    assert.equal(b2.get("x"), f2.get("x"));
    assert.deepEqual(forward.resolve(f1.get("x")!), { server: "a.b", tool: "x" });
    assert.deepEqual(forward.resolve("mcp__a_b__x"), { server: "a_b", tool: "x" });
  });

  it("tools of one server that collide after sanitising get distinct names", () => {
    const namer = new ToolNamer();
    const names = namer.assign("s", tools("get.item", "get_item", "get item"));
    assert.equal(names.get("get_item"), "mcp__s__get_item");
    assert.match(names.get("get.item")!, HASHED);
    assert.match(names.get("get item")!, HASHED);
    assert.equal(new Set(names.values()).size, 3);
    assertWellFormed(namer, new Map([["s", names]]));
  });

  it("the order a server lists its tools in does not change their names", () => {
    const list = ["b.x", "a", "b_x", "检查", "c", "b-x"];
    const one = new ToolNamer().assign("s", tools(...list));
    const two = new ToolNamer().assign("s", tools(...[...list].reverse()));
    for (const t of list) assert.equal(one.get(t), two.get(t), t);
  });

  it("separator look-alikes cannot collide: server a + tool b__x vs server a__b + tool x", () => {
    const namer = new ToolNamer();
    const n1 = namer.assign("a", tools("b__x")).get("b__x")!;
    const n2 = namer.assign("a__b", tools("x")).get("x")!;
    assert.equal(n1, "mcp__a__b__x");
    assert.notEqual(n2, n1);
    assert.match(n2, HASHED, "a server part holding __ cannot be read back, so it is hashed");
    const n3 = namer.assign("c_", tools("y")).get("y")!;
    assert.match(n3, HASHED, "a server part ending in _ is hashed too");
  });

  it("a repeated tool name gets one entry", () => {
    const names = new ToolNamer().assign("s", tools("dup", "other", "dup"));
    assert.deepEqual([...names.keys()], ["dup", "other"]);
    assert.equal(names.get("dup"), "mcp__s__dup");
  });

  it("a 200-character tool name is cut to the limit with a hash, and stays reversible", () => {
    const namer = new ToolNamer();
    const long = "t".repeat(200);
    const longer = `${"t".repeat(199)}u`;
    const names = namer.assign("s", tools(long, longer));
    const a = names.get(long)!;
    const b = names.get(longer)!;
    assert.equal(a.length, DEFAULT_MAX_NAME_LENGTH);
    assert.equal(b.length, DEFAULT_MAX_NAME_LENGTH);
    assert.notEqual(a, b);
    assert.ok(a.startsWith("mcp__s__ttt"));
    assert.match(a, HASHED);
    assert.deepEqual(namer.resolve(a), { server: "s", tool: long });
    assert.deepEqual(namer.resolve(b), { server: "s", tool: longer });
  });

  it("unicode and empty tool names are hashed, distinct and reversible", () => {
    const namer = new ToolNamer();
    const list = ["検索", "翻訳", "🔍", "", "café", "cafe"];
    const names = namer.assign("s", tools(...list));
    assert.equal(names.get("cafe"), "mcp__s__cafe");
    for (const t of ["検索", "翻訳", "🔍", "", "café"]) assert.match(names.get(t)!, HASHED, JSON.stringify(t));
    assert.equal(names.get("🔍"), `mcp__s____${stableHash("s\u0000🔍")}`, "one _ per code point, not per UTF-16 unit");
    assertWellFormed(namer, new Map([["s", names]]));
    assert.deepEqual(namer.resolve(names.get("")!), { server: "s", tool: "" });
  });

  it("more than 1000 tools across several servers: unique, reversible, within the limit, order-independent", () => {
    const servers: Record<string, string[]> = {};
    const serverNames = ["fs", "git", "a.b", "a_b", "web-search", "db", "cloud.provider", "x".repeat(70)];
    serverNames.forEach((server, s) => {
      const list: string[] = [];
      for (let i = 0; i < 140; i++) {
        const style = i % 7;
        if (style === 0) list.push(`tool_${i}`);
        else if (style === 1) list.push(`tool.${i - 1}`); // collides with tool_${i-1} after sanitising
        else if (style === 2) list.push(`工具${i}`);
        else if (style === 3) list.push(`${"long".repeat(30)}${i}`);
        else if (style === 4) list.push(`ns/${s}/item ${i}`);
        else if (style === 5) list.push(`get-${i}`);
        else list.push(i % 2 === 0 ? "" : `t${i}__x`);
      }
      servers[server] = list;
    });
    const total = Object.values(servers).reduce((n, l) => n + new Set(l).size, 0);
    assert.ok(total > 1000, `${total} tools`);

    const namer = new ToolNamer();
    const assigned = new Map<string, Map<string, string>>();
    for (const server of serverNames) assigned.set(server, namer.assign(server, tools(...servers[server]!)));
    assertWellFormed(namer, assigned);
    assert.equal([...assigned.values()].reduce((n, m) => n + m.size, 0), total);

    // Servers connect in another order and list their tools shuffled: every name is the same.
    const again = new ToolNamer();
    for (const server of [...serverNames].reverse()) {
      const shuffled = [...servers[server]!].sort((x, y) => stableHash(x).localeCompare(stableHash(y)));
      const names = again.assign(server, tools(...shuffled));
      for (const [tool, name] of assigned.get(server)!) assert.equal(names.get(tool), name, `${server}/${tool}`);
    }
  });

  it("re-assigning after list_changed keeps surviving names and touches no other server", () => {
    const namer = new ToolNamer();
    namer.assign("a", tools("keep", "drop", "x.y"));
    const other = namer.assign("b", tools("keep", "z"));
    const kept = namer.nameOf("a", "x.y");
    const next = namer.assign("a", tools("x.y", "keep", "new"));
    assert.equal(next.get("keep"), "mcp__a__keep");
    assert.equal(next.get("x.y"), kept);
    assert.equal(next.get("new"), "mcp__a__new");
    assert.equal(namer.resolve("mcp__a__drop"), undefined, "a removed tool's name is released");
    assert.equal(namer.nameOf("a", "drop"), undefined);
    for (const [tool, name] of other) assert.deepEqual(namer.resolve(name), { server: "b", tool });
  });

  it("a surviving tool keeps even a first-come name that a fresh assignment would give differently", () => {
    const namer = new ToolNamer();
    namer.assign("s1", tools("t"), "shared");
    const second = namer.assign("s2", tools("t"), "shared").get("t")!;
    assert.match(second, HASHED, "a shared prefix is first come, first served");
    namer.release("s1");
    assert.equal(namer.assign("s2", tools("t", "u"), "shared").get("t"), second);
  });

  it("release forgets a server's names and frees them", () => {
    const namer = new ToolNamer();
    namer.assign("s", tools("t"), "p");
    namer.release("s");
    assert.equal(namer.resolve("mcp__p__t"), undefined);
    assert.equal(namer.assign("other", tools("t"), "p").get("t"), "mcp__p__t");
    namer.release("never-assigned");
  });

  it("a changed prefix renames every tool of that server", () => {
    const namer = new ToolNamer();
    namer.assign("s", tools("t"), "old");
    const names = namer.assign("s", tools("t"), "new");
    assert.equal(names.get("t"), "mcp__new__t");
    assert.equal(namer.resolve("mcp__old__t"), undefined);
  });

  it("a custom naming function is used, its output sanitised, capped and de-duplicated", () => {
    const calls: string[][] = [];
    const namer = new ToolNamer({
      naming: (prefix, tool, server) => {
        calls.push([prefix, tool, server]);
        return tool.startsWith("same") ? "same" : `${prefix}.${tool}`;
      },
    });
    const names = namer.assign("srv", tools("plain", "same1", "same2"), "P");
    assert.deepEqual(calls[0], ["P", "plain", "srv"]);
    assert.match(names.get("plain")!, /^P_plain_[0-9a-f]{8}$/, "a sanitised custom name is hashed");
    assert.equal(names.get("same1"), "same", "the first of the colliding tools in sorted order keeps it");
    assert.match(names.get("same2")!, /^same_[0-9a-f]{8}$/);
    const plainNamer = new ToolNamer({ naming: (_p, tool) => `t_${tool}` });
    assert.equal(plainNamer.assign("s", tools("ok")).get("ok"), "t_ok");
  });

  it("maxLength is configurable, with a floor that leaves room for the hash", () => {
    const namer = new ToolNamer({ maxLength: 24 });
    const names = namer.assign("server", tools("short", "a_much_longer_tool_name"));
    assert.equal(names.get("short"), "mcp__server__short");
    const long = names.get("a_much_longer_tool_name")!;
    assert.equal(long.length, 24);
    assert.match(long, HASHED);
    assert.throws(() => new ToolNamer({ maxLength: 19 }), RangeError);
    assert.throws(() => new ToolNamer({ maxLength: 40.5 }), RangeError);
  });
});

describe("ToolNamer with an empty lead (a gateway's <namespace>__<name>)", () => {
  it("keeps the same rules: plain when readable back, hashed otherwise", () => {
    const namer = new ToolNamer({ lead: "" });
    assert.equal(namer.assign("fs", tools("read")).get("read"), "fs__read");
    assert.match(namer.assign("a_", tools("b")).get("b")!, /^a___b_[0-9a-f]{8}$/, "a part ending in _ could be read back wrong");
    assert.deepEqual(namer.resolve("fs__read"), { server: "fs", tool: "read" });
    assert.throws(() => new ToolNamer({ lead: "mcp:" }), RangeError);
  });
});

describe("UriNamespaces", () => {
  it("puts a URI under its namespace verbatim and takes it back", () => {
    const uris = new UriNamespaces();
    assert.equal(uris.wrap("fs", "file:///a b?x#y"), "mcp-bridge://fs/file:///a b?x#y");
    assert.deepEqual(uris.unwrap("mcp-bridge://fs/file:///a b?x#y"), { namespace: "fs", uri: "file:///a b?x#y" });
    assert.equal(uris.wrap("fs", "mem://{id}"), "mcp-bridge://fs/mem://{id}", "templates keep their expressions");
  });

  it("hashes a namespace that is not a plain word, the same way in every instance", () => {
    const wrapped = new UriNamespaces().wrap("my server/1", "x:y");
    assert.match(wrapped, /^mcp-bridge:\/\/my_server_1_[0-9a-f]{8}\/x:y$/);
    const restarted = new UriNamespaces();
    assert.equal(restarted.wrap("my server/1", "x:y"), wrapped);
    assert.deepEqual(restarted.unwrap(wrapped), { namespace: "my server/1", uri: "x:y" });
  });

  it("knows nothing it did not hand out", () => {
    const uris = new UriNamespaces();
    uris.segmentOf("fs");
    assert.deepEqual([uris.unwrap("file:///a"), uris.unwrap("mcp-bridge://other/x"), uris.unwrap("mcp-bridge://fs")], [undefined, undefined, undefined]);
  });
});

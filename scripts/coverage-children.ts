/**
 * Preloaded (`--import`) into the test files of a coverage run, so that one child process killed
 * while it writes its coverage profile cannot void the whole report.
 *
 * Node's test runner collects the V8 profiles of every process that inherits its
 * `NODE_V8_COVERAGE` directory, the servers our tests start included, and stops reporting
 * coverage altogether ("Could not report code coverage", exit 1, an lcov file with no source in
 * it) when one profile is empty or cut short. A server writes its profile as it exits; a test
 * that stops it with a signal in that moment, which teardown tests do on purpose and a busy
 * machine makes likely, leaves such a file. So a test file's children write into a directory of
 * their own, and when the test file ends, each profile that parses is moved beside the test
 * file's own; one that does not is dropped and counted on stderr.
 *
 * Only where `NODE_V8_COVERAGE` is set when this module loads: the runner's own process sets it
 * later, and a run without coverage is left alone.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

const PROFILE = /^coverage-\d+-\d+-\d+\.json$/;

const collected = process.env["NODE_V8_COVERAGE"];
if (collected !== undefined && collected !== "") {
  // The runner reads only files named like PROFILE, so this directory is invisible to it.
  const children = join(collected, `children-of-${process.pid}`);
  mkdirSync(children, { recursive: true });
  process.env["NODE_V8_COVERAGE"] = children;
  process.on("exit", () => {
    let dropped = 0;
    for (const name of readdirSync(children)) {
      if (!PROFILE.test(name)) continue;
      const from = join(children, name);
      try {
        JSON.parse(readFileSync(from, "utf8"));
        renameSync(from, join(collected, name));
      } catch {
        dropped++;
      }
    }
    rmSync(children, { recursive: true, force: true });
    if (dropped > 0) {
      process.stderr.write(`coverage: dropped ${dropped} unreadable profile(s) of child processes stopped while writing them\n`);
    }
  });
}

/**
 * CPU time of a timed round, for the runners: this process's own (process.cpuUsage) and the
 * server child's, read from Linux's /proc (null elsewhere). Also CPU pinning (Linux taskset),
 * which sections 8 and 9b use so that where the scheduler puts a server cannot favour a side.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/**
 * CPU time of process `pid` so far, ms, from Linux's /proc: `schedstat` (nanoseconds) where
 * the kernel keeps it, else `stat` (utime + stime in 10 ms ticks). Undefined without /proc.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    // no schedstat: fall back to stat
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The fields after the command name (which may hold spaces) start after the last ')';
    // utime and stime are fields 14 and 15 of the line, in USER_HZ ticks (100 per second).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** Long enough for the server to answer its last call and go idle (its CPU time is then current). */
const SETTLE_MS = 20;

/** Runs `body` and adds the CPU time this process and the server spent meanwhile. */
export async function withCpu<T extends object>(
  serverPid: number | undefined,
  body: () => Promise<T>,
): Promise<T & { clientCpuMs: number; serverCpuMs: number | null }> {
  const server0 = processCpuMs(serverPid);
  const client0 = process.cpuUsage();
  const result = await body();
  const client = process.cpuUsage(client0);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const server1 = processCpuMs(serverPid);
  const serverCpuMs = server0 === undefined || server1 === undefined ? null : server1 - server0;
  return { ...result, clientCpuMs: (client.user + client.system) / 1000, serverCpuMs };
}

/**
 * Whether processes can be pinned to CPUs here: Linux with `taskset` (util-linux) on the PATH
 * and at least two CPUs.
 */
export function pinningAvailable(): boolean {
  if (process.platform !== "linux" || availableParallelism() < 2) return false;
  return spawnSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" }).status === 0;
}

/**
 * Restricts the main thread of process `pid` to CPU `cpu` (taskset -pc); false when that failed.
 * Its helper threads (GC, libuv) stay free: pinning them too would make a side's garbage
 * collection compete with its own JavaScript for one CPU, which no user's setup does.
 */
export function pinToCpu(pid: number, cpu: number): boolean {
  return spawnSync("taskset", ["-pc", String(cpu), String(pid)], { stdio: "ignore" }).status === 0;
}

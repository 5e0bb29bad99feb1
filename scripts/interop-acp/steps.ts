/**
 * The step runner of the ACP interop, and bounded waiting: every wait has a deadline, and a
 * step that throws is recorded as failed without stopping the steps after it.
 */

export interface StepResult {
  name: string;
  status: "ok" | "FAIL" | "skipped";
  detail: string;
}

export class Steps {
  readonly results: StepResult[] = [];
  /** Appended to every failure's detail, e.g. that the process under test has died. */
  context: () => Promise<string> = async () => "";

  /** Runs `body` (its deadline is the caller's, through {@link within}); true if it passed. */
  async run(name: string, body: () => Promise<string>): Promise<boolean> {
    try {
      this.results.push({ name, status: "ok", detail: await body() });
      return true;
    } catch (err) {
      this.results.push({ name, status: "FAIL", detail: (err instanceof Error ? err.message : String(err)) + (await this.context()) });
      return false;
    }
  }

  skip(name: string, why: string): void {
    this.results.push({ name, status: "skipped", detail: why });
  }

  get passed(): boolean {
    return this.results.length > 0 && this.results.every((r) => r.status === "ok");
  }
}

export function expect(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

/** `promise`, or a rejection naming `what` once `ms` have passed. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/**
 * Resolves once `condition()` holds; rejects naming `what` after `ms` (a function is called
 * then, so that it can say what was still wrong). Polls every 25 ms.
 */
export async function eventually(condition: () => boolean, ms: number, what: string | (() => string)): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A Writable for tests that records each write the stream hands on: one entry per write or writev. */
import { Writable } from "node:stream";

export function writeRecorder(): { stream: Writable; writes: string[][] } {
  const writes: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      writes.push([chunk.toString("utf8")]);
      done();
    },
    writev(chunks, done) {
      writes.push(chunks.map((c) => (c.chunk as Buffer).toString("utf8")));
      done();
    },
  });
  return { stream, writes };
}

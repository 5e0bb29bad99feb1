/**
 * The bounded store behind Streamable HTTP resumability. One per session: every message the
 * server writes on an SSE stream is kept here under its stream and sequence number, so a client
 * that lost the connection can ask for "everything after event id X" with GET + Last-Event-ID.
 *
 * Event ids have the form `<streamId>:<seq>` (both decimal): the id names its stream, so a
 * resume replays that stream only. Sequence numbers grow by one per stream, starting at 1;
 * `<streamId>:0` means "before the first event".
 */
import { Buffer } from "node:buffer";

/** One stored event. `data` is the JSON text that went (or will go) on the wire. */
export interface StoredEvent {
  readonly streamId: string;
  readonly seq: number;
  readonly data: string;
  /** UTF-8 size of `data`, counted against the byte limit. */
  readonly bytes: number;
}

export interface EventStoreOptions {
  /** Events kept at most; the oldest go first. Default 1000. */
  maxEvents?: number;
  /** Total UTF-8 bytes of `data` kept at most; the oldest go first. Default 8 MiB. */
  maxBytes?: number;
}

/** The id of event `seq` of stream `streamId`. */
export function formatEventId(streamId: string, seq: number): string {
  return `${streamId}:${seq}`;
}

const EVENT_ID = /^(0|[1-9]\d{0,14}):(0|[1-9]\d{0,14})$/;

/** Splits an event id made by {@link formatEventId}; `undefined` for anything else. */
export function parseEventId(id: string): { streamId: string; seq: number } | undefined {
  const m = EVENT_ID.exec(id);
  return m ? { streamId: m[1], seq: Number(m[2]) } : undefined;
}

/**
 * A FIFO of events bounded by count and bytes, with a per-stream index for replay. An event
 * larger than `maxBytes` on its own is not stored (it is counted in {@link dropped}).
 */
export class EventStore {
  readonly maxEvents: number;
  readonly maxBytes: number;
  private readonly queue: StoredEvent[] = [];
  private head = 0;
  private totalBytes = 0;
  private evicted = 0;
  private readonly streams = new Map<string, StoredEvent[]>();

  constructor(options: EventStoreOptions = {}) {
    this.maxEvents = options.maxEvents ?? 1000;
    this.maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
    if (!Number.isInteger(this.maxEvents) || this.maxEvents < 1) throw new RangeError("EventStore: maxEvents must be a positive integer");
    if (!Number.isInteger(this.maxBytes) || this.maxBytes < 1) throw new RangeError("EventStore: maxBytes must be a positive integer");
  }

  /** Events currently kept. */
  get size(): number {
    return this.queue.length - this.head;
  }

  /** Bytes currently kept. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Events evicted (or refused as too large) since creation: a resume past them is lossy. */
  get dropped(): number {
    return this.evicted;
  }

  /** Keeps event `seq` of `streamId`, evicting the oldest events beyond the limits. */
  append(streamId: string, seq: number, data: string): void {
    const bytes = Buffer.byteLength(data, "utf8");
    if (bytes > this.maxBytes) {
      this.evicted++;
      return;
    }
    const event: StoredEvent = { streamId, seq, data, bytes };
    this.queue.push(event);
    this.totalBytes += bytes;
    let list = this.streams.get(streamId);
    if (!list) {
      list = [];
      this.streams.set(streamId, list);
    }
    list.push(event);
    while (this.size > this.maxEvents || this.totalBytes > this.maxBytes) this.evictOldest();
  }

  /** Events of `streamId` with a sequence number above `seq`, oldest first. */
  after(streamId: string, seq: number): StoredEvent[] {
    const list = this.streams.get(streamId);
    if (!list) return [];
    let i = list.length;
    while (i > 0 && list[i - 1].seq > seq) i--;
    return list.slice(i);
  }

  /** Forgets everything. */
  clear(): void {
    this.queue.length = 0;
    this.head = 0;
    this.totalBytes = 0;
    this.streams.clear();
  }

  private evictOldest(): void {
    const event = this.queue[this.head];
    this.queue[this.head] = undefined as unknown as StoredEvent;
    this.head++;
    this.totalBytes -= event.bytes;
    this.evicted++;
    // FIFO order holds within each stream too, so the oldest event is its stream's first.
    const list = this.streams.get(event.streamId);
    if (list) {
      list.shift();
      if (list.length === 0) this.streams.delete(event.streamId);
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }
}

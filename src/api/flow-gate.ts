/**
 * The back-pressure of a stream's transport, the same over gRPC and HTTP: a message is handed over
 * with a callback the transport calls once it has passed it on (to HTTP/2's flow control, to the
 * socket), and the transport has room while fewer than `MAX_PENDING` messages wait and its own
 * buffer is not full. A consumer that stops reading holds at most that many messages in memory.
 */

/** Messages a stream may have waiting in its transport before it reads no more. */
export const MAX_PENDING = 2;

export interface FlowGate {
  /** Hands a message over with `write` (which returns false when the transport's buffer is full); whether there is room for the next. */
  pass(write: (done: (error?: Error | null) => void) => boolean): boolean;
  /** Resolves once every message handed over was passed on. */
  drained(): Promise<void>;
}

export function createFlowGate(): FlowGate {
  let pending = 0;
  let waiting: (() => void)[] = [];
  const done = () => {
    pending--;
    if (pending > 0) return;
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
  };
  return {
    pass(write) {
      pending++;
      let called = false;
      const room = write(() => {
        // A transport that fails calls back with an error, once; the stream ends by its close.
        if (called) return;
        called = true;
        done();
      });
      return room && pending < MAX_PENDING;
    },
    drained() {
      if (pending === 0) return Promise.resolve();
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

import type postgres from "postgres";

type Sql = postgres.Sql;

/** The part of a postgres.js query this needs: run when first awaited, and cancellable. */
interface Cancellable {
  then: PromiseLike<unknown>["then"];
  cancel(): unknown;
}

function isQuery(value: unknown): value is Cancellable {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<Cancellable>).cancel === "function" &&
    typeof (value as Partial<Cancellable>).then === "function"
  );
}

/**
 * `sql`, whose statements are cancelled after `ms`: the statement timeout of a pool whose server
 * cannot be told one, as behind a transaction pooler, where a setting made on one server
 * connection would be left to whichever client borrows it next.
 *
 * The clock starts when a statement is first awaited, which is when postgres.js sends it (or
 * queues it for a free connection: that wait counts too). A statement built only to be part of
 * another is never awaited, so it has no clock of its own. The cancel goes to the server as
 * PostgreSQL's own cancel request, which a pooler forwards to the server connection running the
 * statement; the statement then fails with SQLSTATE 57014, as a server-side timeout does.
 */
export function withStatementDeadline(sql: Sql, ms: number): Sql {
  const arm = <T>(made: T): T => {
    if (!isQuery(made)) return made;
    const query = made;
    const then = query.then;
    let started = false;
    const armed = function (this: unknown, ...args: Parameters<typeof then>) {
      if (!started) {
        started = true;
        const timer = setTimeout(() => void query.cancel(), ms);
        const settled = () => clearTimeout(timer);
        then.call(query, settled, settled);
      }
      return then.apply(query, args);
    };
    // Defined on the query itself: its class's `then` is what runs it, and still does.
    // biome-ignore lint/suspicious/noThenProperty: the query is a promise already; this wraps its own then.
    Object.defineProperty(query, "then", { value: armed, configurable: true, writable: true });
    return made;
  };
  const unsafe: Sql["unsafe"] = (...args) => arm(sql.unsafe(...args));
  return new Proxy(sql, {
    apply: (target, self, args) => arm(Reflect.apply(target, self, args)),
    get: (target, key, receiver) => (key === "unsafe" ? unsafe : Reflect.get(target, key, receiver)),
  });
}

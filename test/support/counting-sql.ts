/**
 * A pool that counts the statements sent through it that name a table, and can be made to fail
 * them: what a test measures "no query for this" and "the database stopped answering" with.
 */
import type { Sql } from "../../src/store/pg/database.ts";

export interface CountingSql {
  sql: Sql;
  /** Statements sent naming the table (failed ones included). */
  count(): number;
  /** While set, every statement fails as a refused connection does, without reaching the server. */
  failing: boolean;
}

export function countingSql(sql: Sql, table: string): CountingSql {
  const state: CountingSql = {
    sql: undefined as unknown as Sql,
    count: () => counted,
    failing: false,
  };
  let counted = 0;
  state.sql = new Proxy(sql, {
    apply(target, thisArg, args: unknown[]) {
      const [strings] = args;
      if (Array.isArray(strings) && strings.join("").includes(table)) counted++;
      if (state.failing) {
        return Promise.reject(
          Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), {
            code: "ECONNREFUSED",
            syscall: "connect",
          }),
        );
      }
      return Reflect.apply(target, thisArg, args);
    },
  });
  return state;
}

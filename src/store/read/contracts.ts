import type { Address, Hex } from "../../core/hex.ts";
import { CONTRACT_TYPES, type ContractType } from "../../core/types.ts";
import { bare, type Queryable, toHex } from "../pg/database.ts";

export interface ContractListing {
  address: Address;
  name: string;
  symbol: string;
  decimals: number;
  types: ContractType[];
  mintEvent: {
    /** When the contract was minted; undefined when no block of its creation was seen. */
    blockTime: Date | undefined;
    txHash: Hex | undefined;
    minter: Address | undefined;
  };
  /** Where the contract stands in the list's order, exactly: what a page token holds. */
  position: ContractPosition;
}

/**
 * A place in the contracts list's order: a mint time and an address. Contracts whose mint time is
 * unknown come after all others (before all others in DESC).
 */
export interface ContractPosition {
  /** Microseconds since 1970-01-01T00:00:00Z (the column's precision); null when unknown. */
  mintTime: bigint | null;
  address: Address;
}

export interface ContractQuery {
  limit: number;
  offset: number;
  /** By mint time, ties by address in the same direction: DESC is ASC reversed, row for row. */
  direction: "asc" | "desc";
  /** Contracts of any of these types; all contracts when empty. */
  types: readonly ContractType[];
  /** Only contracts minted strictly after this instant (those of unknown mint time are left out). */
  mintedAfter: Date | undefined;
  /** Only contracts after this position in the list's direction: the page after the one that ended there. */
  after?: ContractPosition | undefined;
}

interface Row {
  address: Uint8Array;
  name: string;
  symbol: string;
  decimals: number;
  types: ContractType[];
  mint_time: Date | null;
  mint_us: string | null;
  mint_tx: Uint8Array | null;
  minter: Uint8Array | null;
}

/**
 * The sort key, exactly as migration 0010 indexes it: an unknown mint time is `infinity`, so that
 * every position, a NULL one too, is a value the index can range over.
 */
const KEY = "coalesce(mint_time, 'infinity'::timestamptz)";

/**
 * Each type's condition, written as the predicate of its partial index (0010). PostgreSQL uses a
 * partial index only for a condition it can prove from the query's text, with the type as a
 * constant, never as a parameter; so the constants are made here from the store's own list of
 * types, and client text never reaches them.
 */
const TYPE_CONDITION: ReadonlyMap<ContractType, string> = new Map(
  CONTRACT_TYPES.map((type) => [type, `types @> '{${type}}'::text[]`]),
);

const COLUMNS = "address, name, symbol, decimals, types, mint_time, mint_tx, minter";

/**
 * The query of a page of the chain's contracts in mint order, unsent: `listContracts` runs it, and
 * a test can ask PostgreSQL for its plan. Every page is an index range of at most offset + limit
 * rows, whatever the size of the table or the depth of the page:
 *
 * - without a type filter, one range of the index on (chain, key, address), from the page token's
 *   position (a row comparison, which the index serves as a range) or from the start;
 * - with one type, the same range of that type's partial index;
 * - with several, one such range per type, each cut at offset + limit rows, merged in order (a
 *   Merge Append of the ranges), and a contract of two of the types taken once.
 */
export function contractsQuery(sql: Queryable, chainId: number, query: ContractQuery) {
  const asc = query.direction === "asc";
  const order = sql.unsafe(asc ? `${KEY} ASC, address ASC` : `${KEY} DESC, address DESC`);
  const bounds = boundsOf(sql, query);
  const types = query.types.map((type) => {
    const condition = TYPE_CONDITION.get(type);
    if (condition === undefined) throw new RangeError(`not a contract type: ${type}`);
    return sql.unsafe(condition);
  });
  const mintUs = sql.unsafe("(extract(epoch FROM mint_time) * 1000000)::bigint::text AS mint_us");
  if (types.length <= 1) {
    const typeCondition = types[0] ? sql`AND ${types[0]}` : sql``;
    return sql<Row[]>`
      SELECT ${sql.unsafe(COLUMNS)}, ${mintUs} FROM contracts
      WHERE chain_id = ${chainId} ${typeCondition} ${bounds}
      ORDER BY ${order}
      LIMIT ${query.limit} OFFSET ${query.offset}`;
  }
  const ranges = types.map(
    (condition, i) => sql`
      ${i === 0 ? sql`` : sql`UNION ALL`}
      (SELECT ${sql.unsafe(COLUMNS)}, ${sql.unsafe(KEY)} AS key FROM contracts
       WHERE chain_id = ${chainId} AND ${condition} ${bounds}
       ORDER BY ${order}
       LIMIT ${query.offset + query.limit})`,
  );
  // DISTINCT ON keeps the merged order: PostgreSQL drops the repeats of a contract as they pass.
  return sql<Row[]>`
    SELECT DISTINCT ON (key, address) ${sql.unsafe(COLUMNS)}, ${mintUs}
    FROM (${ranges}) AS merged
    ORDER BY ${sql.unsafe(asc ? "key ASC, address ASC" : "key DESC, address DESC")}
    LIMIT ${query.limit} OFFSET ${query.offset}`;
}

/**
 * The conditions that bound the range. `blockTimestampGt` is a lower bound on the key and an upper
 * one below infinity (it leaves out unknown mint times); a page token's position is a lower bound
 * (ASC) or an upper one (DESC). A range has one start: two bounds on the same side, a scalar one and
 * a row comparison, could make the scan start at the looser one and walk to the other, so of two
 * on the start's side only the tighter is written.
 */
function boundsOf(sql: Queryable, query: ContractQuery) {
  const minted = query.mintedAfter === undefined ? undefined : BigInt(query.mintedAfter.getTime()) * 1000n;
  const after = query.after;
  let aboveMinted = minted !== undefined;
  let belowInfinity = minted !== undefined;
  let position = after !== undefined;
  if (after !== undefined && minted !== undefined) {
    if (query.direction === "asc") {
      // After an unknown mint time come only unknown ones, which blockTimestampGt leaves out.
      if (after.mintTime === null) return sql`AND false`;
      if (after.mintTime > minted) aboveMinted = false;
      else position = false;
    } else if (after.mintTime === null) {
      position = false;
    } else {
      belowInfinity = false;
    }
  }
  const conditions = [];
  if (aboveMinted && minted !== undefined) {
    conditions.push(sql`AND ${sql.unsafe(KEY)} > ${timestampText(minted)}::text::timestamptz`);
  }
  if (belowInfinity) conditions.push(sql`AND ${sql.unsafe(KEY)} < 'infinity'::timestamptz`);
  if (position && after !== undefined) {
    // Text, not a Date: PostgreSQL keeps microseconds, and `infinity` is no Date.
    const time = after.mintTime === null ? "infinity" : timestampText(after.mintTime);
    conditions.push(
      sql`AND (${sql.unsafe(KEY)}, address) ${query.direction === "asc" ? sql`>` : sql`<`}
               (${time}::text::timestamptz, ${Buffer.from(bare(after.address), "hex")})`,
    );
  }
  return conditions.length === 0 ? sql`` : sql`${conditions}`;
}

/** An instant in microseconds as PostgreSQL reads it exactly: `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
function timestampText(micros: bigint): string {
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const extra = micros - ms * 1000n;
  return new Date(Number(ms)).toISOString().replace("Z", `${extra.toString().padStart(3, "0")}Z`);
}

/**
 * A page of the chain's contracts in mint order (see `contractsQuery`). Each contract carries its
 * position, for a page token after it.
 */
export async function listContracts(
  sql: Queryable,
  chainId: number,
  query: ContractQuery,
): Promise<ContractListing[]> {
  const rows = await contractsQuery(sql, chainId, query);
  return rows.map((r) => {
    const address = toHex(r.address) as Address;
    return {
      address,
      name: r.name,
      symbol: r.symbol,
      decimals: r.decimals,
      types: r.types,
      mintEvent: {
        blockTime: r.mint_time ?? undefined,
        txHash: r.mint_tx ? (toHex(r.mint_tx) as Hex) : undefined,
        minter: r.minter ? (toHex(r.minter) as Address) : undefined,
      },
      position: { mintTime: r.mint_us === null ? null : BigInt(r.mint_us), address },
    };
  });
}

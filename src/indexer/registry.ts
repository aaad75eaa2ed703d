import { LRUCache } from "lru-cache";
import type { Address } from "../core/hex.ts";
import type { ContractType } from "../core/types.ts";
import type {
  ContractReclassification,
  ContractRecord,
  FirstSeenAt,
  StoredContract,
} from "../store/tables/contracts.ts";
import type { TypesOf } from "./decode/readings.ts";
import type { EmittedShapes, EventShape } from "./decode/shapes.ts";

export interface Inspection {
  types: ContractType[];
  name: string;
  symbol: string;
  decimals: number;
}

/**
 * Inspects a contract on chain: its types from byte-code, ERC-165 and emitted events; its name,
 * symbol, decimals. At the latest state: any node answers that, historical state needs an archive node.
 */
export type InspectFn = (address: Address, emitted: EmittedShapes) => Promise<Inspection>;

/** Reads what the store knows of contracts (their row, whether their deployment was seen). */
export type LookupFn = (addresses: readonly Address[]) => Promise<Map<Address, StoredContract>>;

/** What the registry knows of one contract. */
interface Known {
  types: ReadonlySet<ContractType>;
  /** The shapes it was inspected with: a shape outside them inspects it once more. */
  shapes: ReadonlySet<EventShape>;
  /** Its deployment is stored, so its mint event needs no first-seen lookup. */
  created: boolean;
}

/** An inspection waiting for the first batch that involves the contract to commit it. */
interface Pending {
  inspection: Inspection;
  shapes: ReadonlySet<EventShape>;
  /** The contract has a row already: only its types and shapes are added to. */
  reclassify: boolean;
}

/** The rows a batch commits for the registry, and what they were made from. */
export interface TakenRecords {
  records: ContractRecord[];
  reclassified: ContractReclassification[];
  taken: ReadonlyMap<Address, Pending>;
}

/** What a batch needs from the registry: a frozen view of its emitters' types, and what to store. */
export interface Classified {
  typesOf: TypesOf;
  /** Contracts whose inspection the batch must commit (unless an earlier batch does). */
  pending: Address[];
  /** Pending contracts whose deployment is stored: they need no first-seen lookup. */
  created: ReadonlySet<Address>;
}

const NOTHING_EMITTED: EmittedShapes = new Set();
const INSPECT_CONCURRENCY = 16;
/**
 * Contracts remembered between batches. A mainnet backfill meets millions of token contracts: the
 * least recently seen are forgotten and read from the store again when they come back. Batches
 * never depend on the cache (each gets its own view), so its size only trades memory for queries.
 */
export const REGISTRY_CAPACITY = 100_000;

/** Thrown to batches that were fetched before a rollback: their results must not be used. */
export class RegistryResetError extends Error {
  override readonly name = "RegistryResetError";
}

/**
 * What the indexer knows of the chain's contracts. A contract is inspected (several eth_calls)
 * when it first matters: when it emits a transfer-shaped event, or when it is deployed near the
 * head. It is inspected once per run, however many batches meet it at the same time, and once
 * more for each event shape it had not been seen emitting (a proxy upgraded, an ERC-721 that
 * starts logging ERC-20-shaped transfers), so that its types catch up with what it does.
 *
 * A failed inspection leaves nothing behind: the batch that needed it fails and is read again.
 * After a rollback, `reset` forgets everything, and work started before it never writes back.
 */
export class ContractRegistry {
  private known: LRUCache<Address, Known>;
  private readonly pending = new Map<Address, Pending>();
  private readonly inflight = new Map<Address, Promise<void>>();
  private generation = 0;

  constructor(
    private readonly lookup: LookupFn,
    private readonly inspect: InspectFn,
    private readonly capacity = REGISTRY_CAPACITY,
  ) {
    this.known = new LRUCache({ max: capacity });
  }

  /** Contracts currently remembered (bounded by the capacity) and inspections awaiting their commit. */
  get size(): { known: number; pending: number; inflight: number } {
    return { known: this.known.size, pending: this.pending.size, inflight: this.inflight.size };
  }

  /**
   * Classifies every emitter (with the shapes it emitted in the batch) and every contract in
   * `deployed` (inspected even if it emits nothing), from memory, the store, or the chain.
   */
  async ensure(
    emitted: ReadonlyMap<Address, EmittedShapes>,
    deployed: readonly Address[] = [],
  ): Promise<Classified> {
    const generation = this.generation;
    const wanted = new Map<Address, EmittedShapes>(emitted);
    for (const address of deployed) if (!wanted.has(address)) wanted.set(address, NOTHING_EMITTED);

    // Each round starts the work no other batch has under way, then waits for all of it; a batch
    // that waited on another's work checks again, since that work may have covered other shapes.
    for (let round = 0; ; round++) {
      const waits: Promise<void>[] = [];
      const mine: Address[] = [];
      for (const [address, shapes] of wanted) {
        const inflight = this.inflight.get(address);
        if (inflight) waits.push(inflight);
        else if (this.needsWork(address, shapes)) mine.push(address);
      }
      if (waits.length === 0 && mine.length === 0) break;
      if (mine.length > 0) {
        const work = this.work(mine, wanted, generation);
        const settled = work.finally(() => {
          if (this.generation !== generation) return;
          for (const address of mine)
            if (this.inflight.get(address) === settled) this.inflight.delete(address);
        });
        for (const address of mine) this.inflight.set(address, settled);
        waits.push(settled);
      }
      await Promise.all(waits);
      if (this.generation !== generation) throw new RegistryResetError("the registry was reset");
      if (round > 2 * wanted.size + 8) throw new Error("contract classification does not settle");
    }

    const types = new Map<Address, ReadonlySet<ContractType>>();
    const pending: Address[] = [];
    const created = new Set<Address>();
    for (const address of wanted.keys()) {
      const entry = this.known.get(address);
      if (entry && entry.types.size > 0) types.set(address, entry.types);
      if (this.pending.has(address)) {
        pending.push(address);
        if (entry?.created) created.add(address);
      }
    }
    return { typesOf: (address) => types.get(address), pending, created };
  }

  private needsWork(address: Address, shapes: EmittedShapes): boolean {
    const entry = this.known.peek(address);
    if (entry === undefined) return true;
    for (const shape of shapes) if (!entry.shapes.has(shape)) return true;
    return false;
  }

  private async work(
    addresses: readonly Address[],
    wanted: ReadonlyMap<Address, EmittedShapes>,
    generation: number,
  ): Promise<void> {
    const unknown = addresses.filter((address) => !this.known.has(address));
    const stored = unknown.length > 0 ? await this.lookup(unknown) : new Map<Address, StoredContract>();
    if (this.generation !== generation) return;
    const found = new Map<Address, { entry: Known; stored: boolean }>();
    for (const address of addresses) {
      const cached = this.known.get(address);
      if (cached) {
        found.set(address, { entry: cached, stored: !this.pending.has(address) && cached.types.size > 0 });
        continue;
      }
      const row = stored.get(address);
      found.set(address, {
        entry: {
          types: new Set(row?.types ?? []),
          shapes: new Set((row?.shapes ?? []) as EventShape[]),
          created: row?.created ?? false,
        },
        stored: row?.stored ?? false,
      });
    }

    const toInspect = addresses.filter((address) => {
      const { entry, stored: isStored } = found.get(address) as { entry: Known; stored: boolean };
      const shapes = wanted.get(address) ?? NOTHING_EMITTED;
      const newShape = [...shapes].some((shape) => !entry.shapes.has(shape));
      if (!isStored && !this.pending.has(address) && entry.shapes.size === 0 && entry.types.size === 0) {
        // Never inspected (or only stored as a deployment).
        return true;
      }
      if (!newShape) this.known.set(address, entry);
      return newShape;
    });

    let next = 0;
    const worker = async () => {
      while (next < toInspect.length) {
        const address = toInspect[next++] as Address;
        const { entry, stored: isStored } = found.get(address) as { entry: Known; stored: boolean };
        const shapes = new Set<EventShape>([...entry.shapes, ...(wanted.get(address) ?? NOTHING_EMITTED)]);
        const inspection = await this.inspect(address, shapes);
        if (this.generation !== generation) return;
        const types = new Set<ContractType>([...entry.types, ...inspection.types]);
        this.known.set(address, { types, shapes, created: entry.created });
        const earlier = this.pending.get(address);
        if (types.size > 0 || earlier) {
          this.pending.set(address, {
            inspection: { ...inspection, types: [...types].sort() },
            shapes,
            reclassify: isStored && !earlier,
          });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(INSPECT_CONCURRENCY, toInspect.length) }, worker));
  }

  /**
   * The rows a batch commits for its pending contracts. `firstSeenOf` gives the mint event of a
   * contract whose deployment is not stored. Pass what it returns to `markStored` once committed.
   */
  takeRecords(
    addresses: readonly Address[],
    firstSeenOf: (address: Address) => FirstSeenAt | undefined,
  ): TakenRecords {
    const records: ContractRecord[] = [];
    const reclassified: ContractReclassification[] = [];
    const taken = new Map<Address, Pending>();
    for (const address of addresses) {
      const pending = this.pending.get(address);
      if (!pending) continue;
      taken.set(address, pending);
      const shapes = [...pending.shapes].sort();
      if (pending.reclassify) {
        reclassified.push({ address, types: pending.inspection.types, shapes });
      } else {
        records.push({ address, ...pending.inspection, shapes, firstSeen: firstSeenOf(address) });
      }
    }
    return { records, reclassified, taken };
  }

  /**
   * The batch that carried these records committed. An inspection that came in meanwhile (a new
   * shape, seen by a batch read ahead) stays pending, as an update of the row now stored.
   */
  markStored(taken: TakenRecords): void {
    for (const [address, pending] of taken.taken) {
      const current = this.pending.get(address);
      if (current === pending) this.pending.delete(address);
      else if (current) current.reclassify = true;
    }
  }

  /** Forgets everything: after a rollback, or a failed write, the store is the only truth. */
  reset(): void {
    this.generation++;
    this.known = new LRUCache({ max: this.capacity });
    this.pending.clear();
    this.inflight.clear();
  }
}

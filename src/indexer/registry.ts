import type { Address } from "../core/hex.ts";
import type { ContractType } from "../core/types.ts";
import { type ContractRecord, storedContractTypes } from "../store/contracts.ts";
import type { Sql } from "../store/database.ts";
import type { EmittedShapes } from "./decode/shapes.ts";

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

const NOTHING_EMITTED: EmittedShapes = new Set();

const INSPECT_CONCURRENCY = 16;

/**
 * What the indexer knows of the chain's contracts: stored ones (looked up once) and newly
 * inspected ones waiting for the batch that first commits them. A contract is inspected
 * once per run, however many batches meet it at the same time.
 */
export class ContractRegistry {
  private readonly known = new Map<Address, ReadonlySet<ContractType>>();
  private readonly pending = new Map<Address, Inspection>();
  private readonly inflight = new Map<Address, Promise<void>>();
  /** Contracts that emit transfer-shaped events yet classify as nothing: not asked again this run. */
  private readonly unclassifiable = new Set<Address>();

  constructor(
    private readonly sql: Sql,
    private readonly chainId: number,
    private readonly inspect: InspectFn,
  ) {}

  readonly typesOf = (address: Address): ReadonlySet<ContractType> | undefined => {
    const types = this.known.get(address);
    return types && types.size > 0 ? types : undefined;
  };

  isStored(address: Address): boolean {
    return this.known.has(address) && !this.pending.has(address);
  }

  /** Makes sure every address is classified, from the store or by inspecting it on chain. */
  async ensure(
    addresses: Iterable<Address>,
    emitted: ReadonlyMap<Address, EmittedShapes> = new Map(),
  ): Promise<void> {
    const missing: Address[] = [];
    const waits: Promise<void>[] = [];
    for (const address of new Set(addresses)) {
      const inflight = this.inflight.get(address);
      if (inflight) waits.push(inflight);
      else if (this.needsLookup(address)) missing.push(address);
    }
    if (missing.length > 0) {
      const work = this.lookup(missing, emitted);
      for (const address of missing) {
        const own = work.then(() => {
          this.inflight.delete(address);
        });
        this.inflight.set(address, own);
        waits.push(own);
      }
    }
    await Promise.all(waits);
  }

  private needsLookup(address: Address): boolean {
    const types = this.known.get(address);
    if (types === undefined) return true;
    return types.size === 0 && !this.unclassifiable.has(address);
  }

  private async lookup(addresses: Address[], emitted: ReadonlyMap<Address, EmittedShapes>): Promise<void> {
    const stored = await storedContractTypes(this.sql, this.chainId, addresses);
    const toInspect: Address[] = [];
    for (const address of addresses) {
      const types = stored.get(address);
      if (types && types.length > 0) this.known.set(address, new Set(types));
      else toInspect.push(address);
    }
    let next = 0;
    const worker = async () => {
      while (next < toInspect.length) {
        const address = toInspect[next++] as Address;
        const inspection = await this.inspect(address, emitted.get(address) ?? NOTHING_EMITTED);
        if (inspection.types.length === 0) this.unclassifiable.add(address);
        this.known.set(address, new Set(inspection.types));
        this.pending.set(address, inspection);
      }
    };
    await Promise.all(Array.from({ length: Math.min(INSPECT_CONCURRENCY, toInspect.length) }, worker));
  }

  /** Records for the involved contracts that are not stored yet; `mintOf` supplies each one's mint event. */
  pendingRecords(
    addresses: Iterable<Address>,
    mintOf: (address: Address) => ContractRecord["mint"] | undefined,
  ): ContractRecord[] {
    const records: ContractRecord[] = [];
    for (const address of new Set(addresses)) {
      const inspection = this.pending.get(address);
      const mint = inspection && mintOf(address);
      if (!inspection || !mint) continue;
      // Discovered where it first appears on chain, so that a rollback past that block forgets it.
      records.push({ address, ...inspection, mint, discoveredBlock: mint.blockNumber });
    }
    return records;
  }

  markStored(records: readonly ContractRecord[]): void {
    for (const record of records) this.pending.delete(record.address);
  }

  /** Forgets everything: after a rollback the store is the only truth. */
  reset(): void {
    this.known.clear();
    this.pending.clear();
    this.unclassifiable.clear();
  }
}

import type { Address } from "../core/hex.ts";
import type { SaleTransaction } from "./types.ts";

/** The currency key of the native coin; ERC-20s are keyed by their contract's address. */
export const NATIVE = "native";

/** One movement of a currency, in execution order (native) or log order (ERC-20). */
export interface Movement {
  from: Address;
  to: Address;
  amount: bigint;
  /** The ERC-20 transfer's log index; undefined for the native coin, whose movements come from call traces. */
  logIndex: number | undefined;
}

/** Every payment movement of the transaction, per currency, in order. */
export type Movements = Map<string, Movement[]>;

export function movements(tx: SaleTransaction): Movements {
  const moves: Movements = new Map();
  const add = (
    currency: string,
    from: Address,
    to: Address,
    amount: bigint,
    logIndex: number | undefined,
  ) => {
    if (amount === 0n || from === to) return;
    const list = moves.get(currency);
    if (list) list.push({ from, to, amount, logIndex });
    else moves.set(currency, [{ from, to, amount, logIndex }]);
  };
  if (tx.native) for (const n of tx.native) add(NATIVE, n.from, n.to, n.value, undefined);
  else if (tx.to !== null) add(NATIVE, tx.from, tx.to, tx.value, undefined);
  for (const f of tx.fungible) add(f.contract, f.from, f.to, f.amount, f.logIndex);
  return moves;
}

/** Net amount per currency and account: negative for what an account paid out, positive for what it received. */
export type Flows = Map<string, Map<Address, bigint>>;

export function netFlows(moves: Movements): Flows {
  const flows: Flows = new Map();
  for (const [currency, list] of moves) {
    const accounts = new Map<Address, bigint>();
    for (const { from, to, amount } of list) {
      accounts.set(from, (accounts.get(from) ?? 0n) - amount);
      accounts.set(to, (accounts.get(to) ?? 0n) + amount);
    }
    flows.set(currency, accounts);
  }
  return flows;
}

/** What an account paid out, net, per currency. */
export function paidBy(flows: Flows, account: Address): Map<string, bigint> {
  const paid = new Map<string, bigint>();
  for (const [currency, accounts] of flows) {
    const net = accounts.get(account) ?? 0n;
    if (net < 0n) paid.set(currency, -net);
  }
  return paid;
}

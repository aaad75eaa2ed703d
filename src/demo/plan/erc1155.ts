/**
 * The ERC-1155 editions: mints and batch mints (low ids scarce, higher ones open editions),
 * transfers and batch transfers, burns and batch burns, and sends to 0x…dEaD.
 */
import type { Address } from "../../core/hex.ts";
import type { TxRequest } from "../block-builder.ts";
import { callTx, DEAD_ADDRESS, erc1155BatchGas, GAS } from "../contracts.ts";
import type { Prng } from "../prng.ts";
import type { Erc1155Model } from "../world.ts";
import { type PlanContext, tokenKey } from "./context.ts";

export function createErc1155Planner({ world, prng, counts }: PlanContext) {
  const key = (c: Erc1155Model, id: bigint) => tokenKey(c.contract, id);

  function mint(touched: Set<string>): TxRequest[] | undefined {
    const c = world.erc1155;
    if (!c) return undefined;
    const id = prng.pick(c.tokenIds.filter((i) => !touched.has(key(c, i))));
    if (id === undefined) return undefined;
    const to = world.pickAccount(prng);
    const amount = editionAmount(prng, id);
    touched.add(key(c, id));
    c.add(id, to, amount, world.accountSet);
    counts.erc1155Mints++;
    return [callTx(to, c.contract.address, "TestERC1155", "mint", [to, id, amount, "0x"], GAS.erc1155Mint)];
  }

  function mintBatch(touched: Set<string>): TxRequest[] | undefined {
    const c = world.erc1155;
    if (!c) return undefined;
    const free = c.tokenIds.filter((i) => !touched.has(key(c, i)));
    const ids = sortIds(prng.sample(free, prng.int(2, 5)));
    if (ids.length < 2) return undefined;
    const to = world.pickAccount(prng);
    const amounts = ids.map((id) => editionAmount(prng, id));
    ids.forEach((id, i) => {
      touched.add(key(c, id));
      c.add(id, to, amounts[i] as bigint, world.accountSet);
    });
    counts.erc1155BatchMints++;
    return [
      callTx(
        to,
        c.contract.address,
        "TestERC1155",
        "mintBatch",
        [to, ids, amounts, "0x"],
        erc1155BatchGas(ids.length),
      ),
    ];
  }

  /** One id a demo account holds, free in this block; marks it touched. */
  function heldEdition(c: Erc1155Model, touched: Set<string>): { id: bigint; holder: Address } | undefined {
    const entry = c.held.pick(prng, (k) => !touched.has(key(c, BigInt(k.split(":")[0] ?? ""))));
    if (entry === undefined) return undefined;
    const [id, holder] = entry.split(":") as [string, Address];
    touched.add(key(c, BigInt(id)));
    return { id: BigInt(id), holder };
  }

  /** Some of one held id, to another account or to `to`. */
  function send(touched: Set<string>, to?: Address): TxRequest[] | undefined {
    const c = world.erc1155;
    const held = c && heldEdition(c, touched);
    if (!c || !held) return undefined;
    const balance = c.balanceOf(held.id, held.holder);
    const amount = BigInt(prng.int(1, Number(balance > 5n ? 5n : balance)));
    const recipient = to ?? world.pickAccount(prng, held.holder);
    c.add(held.id, held.holder, -amount, world.accountSet);
    c.add(held.id, recipient, amount, world.accountSet);
    if (recipient === DEAD_ADDRESS) counts.erc1155DeadTransfers++;
    else counts.erc1155Transfers++;
    return [
      callTx(
        held.holder,
        c.contract.address,
        "TestERC1155",
        "safeTransferFrom",
        [held.holder, recipient, held.id, amount, "0x"],
        GAS.erc1155Transfer,
      ),
    ];
  }

  /** Several ids of one holder, none touched yet in this block, with amounts to move. */
  function heldBatch(
    c: Erc1155Model,
    touched: Set<string>,
  ): { holder: Address; ids: bigint[]; amounts: bigint[] } | undefined {
    const first = c.held.pick(prng, (k) => !touched.has(key(c, BigInt(k.split(":")[0] ?? ""))));
    if (first === undefined) return undefined;
    const holder = first.split(":")[1] as Address;
    const free = c.idsHeldBy(holder).filter((id) => !touched.has(key(c, id)));
    const ids = sortIds(prng.sample(free, prng.int(2, 4)));
    if (ids.length < 2) return undefined;
    const amounts = ids.map((id) => {
      const balance = c.balanceOf(id, holder);
      return BigInt(prng.int(1, Number(balance > 3n ? 3n : balance)));
    });
    for (const id of ids) touched.add(key(c, id));
    return { holder, ids, amounts };
  }

  function batchTransfer(touched: Set<string>): TxRequest[] | undefined {
    const c = world.erc1155;
    const batch = c && heldBatch(c, touched);
    if (!c || !batch) return undefined;
    const to = world.pickAccount(prng, batch.holder);
    batch.ids.forEach((id, i) => {
      c.add(id, batch.holder, -(batch.amounts[i] as bigint), world.accountSet);
      c.add(id, to, batch.amounts[i] as bigint, world.accountSet);
    });
    counts.erc1155BatchTransfers++;
    return [
      callTx(
        batch.holder,
        c.contract.address,
        "TestERC1155",
        "safeBatchTransferFrom",
        [batch.holder, to, batch.ids, batch.amounts, "0x"],
        erc1155BatchGas(batch.ids.length),
      ),
    ];
  }

  function burn(touched: Set<string>): TxRequest[] | undefined {
    const c = world.erc1155;
    const held = c && heldEdition(c, touched);
    if (!c || !held) return undefined;
    const amount = BigInt(prng.int(1, Number(c.balanceOf(held.id, held.holder) > 2n ? 2n : 1n)));
    c.add(held.id, held.holder, -amount, world.accountSet);
    counts.erc1155Burns++;
    return [
      callTx(
        held.holder,
        c.contract.address,
        "TestERC1155",
        "burn",
        [held.holder, held.id, amount],
        GAS.erc1155Burn,
      ),
    ];
  }

  function burnBatch(touched: Set<string>): TxRequest[] | undefined {
    const c = world.erc1155;
    const batch = c && heldBatch(c, touched);
    if (!c || !batch) return undefined;
    batch.ids.forEach((id, i) => {
      c.add(id, batch.holder, -(batch.amounts[i] as bigint), world.accountSet);
    });
    counts.erc1155BatchBurns++;
    return [
      callTx(
        batch.holder,
        c.contract.address,
        "TestERC1155",
        "burnBatch",
        [batch.holder, batch.ids, batch.amounts],
        erc1155BatchGas(batch.ids.length),
      ),
    ];
  }

  return {
    mint,
    mintBatch,
    transfer: (touched: Set<string>) => send(touched),
    batchTransfer,
    burn,
    burnBatch,
    sendToDead: (touched: Set<string>) => send(touched, DEAD_ADDRESS),
  };
}

function sortIds(ids: bigint[]): bigint[] {
  return ids.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Low ids are scarce editions (ones and twos), higher ones open editions. */
function editionAmount(prng: Prng, id: bigint): bigint {
  return id <= 3n ? 1n : BigInt(prng.int(1, id <= 8n ? 5 : 50));
}

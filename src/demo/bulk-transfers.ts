/**
 * Fills an anvil with a large number of NFT transfer events as fast as it will take them, for
 * ingestion benchmarks. Most events are ERC-721 mints made by `mintBatch` (hundreds per
 * transaction); a share are ordinary transfers of those tokens between holders, one per
 * transaction; and some are ERC-1155 `TransferBatch`es.
 *
 * Expects anvil started with `--disable-block-gas-limit` (or `--gas-limit` of a few billion): a
 * block then takes hundreds of transactions. Under the default 30M limit it still works, with many
 * more, smaller blocks, and several times slower. Automine is turned off while it runs and
 * restored afterwards.
 */
import { parseEther } from "viem";
import { type Address, numberToHex, wordToAddress } from "../core/hex.ts";
import { devAddress, devAddresses } from "../devchain/deploy.ts";
import { BlockBuilder, type TxRequest } from "./block-builder.ts";
import { callTx, deployTx, encodeCall, erc721MintBatchGas, erc1155BatchGas, GAS } from "./contracts.ts";
import { Prng } from "./prng.ts";
import type { RpcCall } from "./rpc.ts";

export interface BulkTransfersOptions {
  rpcUrl: string;
  /** Produce at least this many NFT transfer events (logs). */
  events: number;
  seed?: number | string;
  /** Accounts holding and trading the tokens. Default 40. */
  holders?: number;
  /** ERC-721 collections the mints are spread over. Default 3. */
  collections?: number;
  /** Tokens per mintBatch transaction. Default 300. */
  mintBatchSize?: number;
  /** Share of the events that are holder-to-holder ERC-721 transfers. Default 0.08. */
  transferShare?: number;
  /** Share of the events that are ERC-1155 TransferBatch logs. Default 0.02. */
  erc1155Share?: number;
  /** Token ids per ERC-1155 batch. Default 8. */
  erc1155BatchIds?: number;
  /**
   * Most transactions per block. Default 1000: anvil spends a time per block that grows with the
   * size of the state, so fewer, fuller blocks are faster.
   */
  txsPerBlock?: number;
  onProgress?: (progress: { events: number; blocks: number; transactions: number }) => void;
}

export interface BulkTransfersResult {
  /** NFT transfer logs emitted (ERC-721 Transfer, ERC-1155 TransferBatch). */
  events: number;
  /** Token movements those logs describe (a TransferBatch moves several ids). */
  tokenTransfers: number;
  erc721Mints: number;
  erc721Transfers: number;
  erc1155Batches: number;
  transactions: number;
  blocks: number;
  firstBlock: number;
  lastBlock: number;
  contracts: { erc721: Address[]; erc1155: Address };
  elapsedMs: number;
}

/** Without a block gas limit, blocks are still kept to a size anvil executes in well under a second. */
const SOFT_BLOCK_GAS = 1_500_000_000n;
const HOLDER_BALANCE = parseEther("1000000");
/** Each holder's stock of every ERC-1155 id: far more than the batches ever move. */
const ERC1155_STOCK = 1_000_000n;

interface Token {
  collection: number;
  id: bigint;
  owner: Address;
}

/** A state read that shows a transaction of the block took effect. */
interface Check {
  call: RpcCall;
  expect: string;
  what: string;
}

export async function generateBulkTransfers(options: BulkTransfersOptions): Promise<BulkTransfersResult> {
  const started = performance.now();
  if (!(options.events > 0)) throw new RangeError("events must be positive");
  const prng = new Prng(options.seed ?? "bulk");
  const holderCount = Math.max(2, options.holders ?? 40);
  const collectionCount = Math.max(1, options.collections ?? 3);
  const batchSize = Math.max(1, options.mintBatchSize ?? 300);
  const batchIds = Math.max(1, options.erc1155BatchIds ?? 8);
  const txsPerBlock = Math.max(1, options.txsPerBlock ?? 1000);
  const builder = new BlockBuilder(options.rpcUrl);
  const rpc = builder.rpc;

  const deployer = devAddress(0);
  const holders = devAddresses(holderCount, 1);
  await rpc.batch(
    [deployer, ...holders].flatMap((address) => [
      { method: "anvil_setBalance", params: [address, numberToHex(HOLDER_BALANCE)] },
      { method: "anvil_impersonateAccount", params: [address] },
    ]),
  );
  const latest = await rpc.call<{ gasLimit: string }>("eth_getBlockByNumber", ["latest", false]);
  const limit = BigInt(latest.gasLimit);
  const blockGas = limit > SOFT_BLOCK_GAS ? SOFT_BLOCK_GAS : (limit * 95n) / 100n;
  if (erc721MintBatchGas(batchSize) > blockGas) {
    throw new Error(`mintBatch of ${batchSize} does not fit a block of ${limit} gas; lower mintBatchSize`);
  }

  const result: BulkTransfersResult = {
    events: 0,
    tokenTransfers: 0,
    erc721Mints: 0,
    erc721Transfers: 0,
    erc1155Batches: 0,
    transactions: 0,
    blocks: 0,
    firstBlock: 0,
    lastBlock: 0,
    contracts: { erc721: [], erc1155: "0x" },
    elapsedMs: 0,
  };
  const erc1155Ids = Array.from({ length: batchIds }, (_, i) => BigInt(i + 1));
  /** What each holder should hold of ERC-1155 id 1; every batch moves one of each id. */
  const stock1155 = new Map<Address, bigint>();

  const ownerCheck = (collection: number, id: bigint, owner: Address): Check => ({
    call: {
      method: "eth_call",
      params: [
        { to: result.contracts.erc721[collection], data: encodeCall("TestERC721", "ownerOf", [id]) },
        "latest",
      ],
    },
    expect: owner,
    what: `owner of token ${id} of ${result.contracts.erc721[collection]}`,
  });
  const stockChecks = (changed: Iterable<Address>): Check[] =>
    [...changed].map((holder) => ({
      call: {
        method: "eth_call",
        params: [
          { to: result.contracts.erc1155, data: encodeCall("TestERC1155", "balanceOf", [holder, 1n]) },
          "latest",
        ],
      },
      expect: String(stock1155.get(holder) ?? 0n),
      what: `ERC-1155 balance of ${holder}`,
    }));

  /**
   * Mines one block and confirms by reading state that every transaction in it took effect.
   * Receipts would say so too, but anvil is slow to produce them for blocks this large; and a
   * successful mintBatch, transferFrom or safeBatchTransferFrom emits exactly the logs counted.
   */
  const mineBlock = async (
    txs: readonly TxRequest[],
    checks: readonly Check[],
    planned: { events: number; tokens: number },
  ): Promise<void> => {
    await builder.addMany(txs);
    const block = await builder.mine(undefined, { receipts: false });
    const results = await rpc.batch<string>(checks.map((c) => c.call)).catch((error: unknown) => {
      throw new Error(
        `block ${block.number}: a transaction did not take effect: ${(error as Error).message}`,
      );
    });
    checks.forEach((check, i) => {
      const raw = results[i] ?? "0x";
      const actual = check.expect.startsWith("0x") ? wordToAddress(raw) : String(BigInt(raw));
      if (actual !== check.expect) {
        throw new Error(`block ${block.number}: ${check.what} is ${actual}, expected ${check.expect}`);
      }
    });
    if (result.firstBlock === 0) result.firstBlock = block.number;
    result.lastBlock = block.number;
    result.blocks++;
    result.transactions += txs.length;
    result.events += planned.events;
    result.tokenTransfers += planned.tokens;
    options.onProgress?.({ events: result.events, blocks: result.blocks, transactions: result.transactions });
  };

  const automine = await rpc.call<boolean>("anvil_getAutomine");
  await rpc.call("evm_setAutomine", [false]);
  try {
    for (let c = 0; c < collectionCount; c++) {
      result.contracts.erc721.push(await builder.nextContractAddress(deployer));
      await builder.add(
        deployTx(deployer, "TestERC721", [`Bulk ${c + 1}`, `BULK${c + 1}`], GAS.deployErc721),
      );
    }
    result.contracts.erc1155 = await builder.nextContractAddress(deployer);
    await builder.add(
      deployTx(deployer, "TestERC1155", ["https://nft.example/bulk/{id}.json"], GAS.deployErc1155),
    );
    result.transactions += collectionCount + 1;
    const deployed = await builder.mine();
    result.firstBlock = deployed.number;
    result.lastBlock = deployed.number;
    result.blocks++;

    const wantTransfers = Math.round(options.events * (options.transferShare ?? 0.08));
    const share1155 = options.erc1155Share ?? 0.02;
    const wantBatches = share1155 > 0 ? Math.max(holderCount, Math.round(options.events * share1155)) : 0;
    let transfersLeft = wantTransfers;
    let batchesLeft = wantBatches;
    if (batchesLeft > 0) {
      // Stocking every holder with all ids is the first of the batches (one TransferBatch each).
      const stock = holders.map((holder) => {
        stock1155.set(holder, ERC1155_STOCK);
        return callTx(
          holder,
          result.contracts.erc1155,
          "TestERC1155",
          "mintBatch",
          [holder, erc1155Ids, erc1155Ids.map(() => ERC1155_STOCK), "0x"],
          erc1155BatchGas(batchIds),
        );
      });
      await mineBlock(stock, stockChecks(holders), { events: holderCount, tokens: holderCount * batchIds });
      result.erc1155Batches += holderCount;
      batchesLeft -= holderCount;
    }
    let mintEventsLeft = Math.max(0, options.events - result.events - wantTransfers - batchesLeft);

    const nextIds = result.contracts.erc721.map(() => 1n);
    /** Tokens minted or moved in earlier blocks, free to move again. */
    const pool: Token[] = [];
    let holderCursor = 0;
    const mintTxsLeft = (): number => Math.ceil(mintEventsLeft / batchSize);
    const otherHolder = (not: Address): Address => {
      const pick = prng.pick(holders);
      return pick !== not ? pick : (holders[(holders.indexOf(pick) + 1) % holderCount] as Address);
    };

    while (result.events < options.events) {
      if (mintTxsLeft() + transfersLeft + batchesLeft === 0) {
        // Everything planned is out yet short of the target: make up the rest with mints.
        mintEventsLeft = options.events - result.events;
      }
      const txs: TxRequest[] = [];
      const checks: Check[] = [];
      const planned = { events: 0, tokens: 0 };
      const moved: Token[] = [];
      const stockChanged = new Set<Address>();
      let gas = 0n;
      while (txs.length < txsPerBlock) {
        const remainingTxs = mintTxsLeft() + transfersLeft + batchesLeft;
        if (remainingTxs === 0) break;
        // Each kind in proportion to the transactions it still needs, so they stay mixed throughout.
        const pick = prng.int(1, remainingTxs);
        if (pick <= mintTxsLeft()) {
          const count = Math.min(batchSize, mintEventsLeft);
          const txGas = erc721MintBatchGas(count);
          if (gas + txGas > blockGas) break;
          const collection = prng.int(0, collectionCount - 1);
          const to = holders[holderCursor++ % holderCount] as Address;
          const first = nextIds[collection] as bigint;
          const address = result.contracts.erc721[collection] as Address;
          nextIds[collection] = first + BigInt(count);
          txs.push(callTx(to, address, "TestERC721", "mintBatch", [to, first, BigInt(count)], txGas));
          checks.push(ownerCheck(collection, first + BigInt(count - 1), to));
          for (let i = 0n; i < BigInt(count); i++) moved.push({ collection, id: first + i, owner: to });
          gas += txGas;
          mintEventsLeft -= count;
          result.erc721Mints += count;
          planned.events += count;
          planned.tokens += count;
        } else if (pick <= mintTxsLeft() + transfersLeft) {
          if (pool.length === 0) {
            // Nothing minted yet to move: this block mints instead.
            if (mintEventsLeft === 0) {
              mintEventsLeft += Math.min(batchSize, transfersLeft);
              transfersLeft -= Math.min(batchSize, transfersLeft);
            }
            if (txs.length > 0) break;
            continue;
          }
          if (gas + GAS.erc721Transfer > blockGas) break;
          const at = prng.int(0, pool.length - 1);
          const token = pool[at] as Token;
          pool[at] = pool[pool.length - 1] as Token;
          pool.pop();
          const to = otherHolder(token.owner);
          const address = result.contracts.erc721[token.collection] as Address;
          txs.push(
            callTx(
              token.owner,
              address,
              "TestERC721",
              "transferFrom",
              [token.owner, to, token.id],
              GAS.erc721Transfer,
            ),
          );
          checks.push(ownerCheck(token.collection, token.id, to));
          moved.push({ ...token, owner: to });
          gas += GAS.erc721Transfer;
          transfersLeft--;
          result.erc721Transfers++;
          planned.events++;
          planned.tokens++;
        } else {
          const txGas = erc1155BatchGas(batchIds);
          if (gas + txGas > blockGas) break;
          const from = prng.pick(holders);
          const to = otherHolder(from);
          txs.push(
            callTx(
              from,
              result.contracts.erc1155,
              "TestERC1155",
              "safeBatchTransferFrom",
              [from, to, erc1155Ids, erc1155Ids.map(() => 1n), "0x"],
              txGas,
            ),
          );
          stock1155.set(from, (stock1155.get(from) ?? 0n) - 1n);
          stock1155.set(to, (stock1155.get(to) ?? 0n) + 1n);
          stockChanged.add(from);
          stockChanged.add(to);
          gas += txGas;
          batchesLeft--;
          result.erc1155Batches++;
          planned.events++;
          planned.tokens += batchIds;
        }
      }
      if (txs.length === 0) continue;
      await mineBlock(txs, [...checks, ...stockChecks(stockChanged)], planned);
      for (const token of moved) pool.push(token);
    }
  } finally {
    await rpc.call("evm_setAutomine", [automine]);
  }
  result.elapsedMs = Math.round(performance.now() - started);
  return result;
}

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  decodeEventLog,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  keccak256,
  type Log,
  parseEther,
  stringToHex,
  type TransactionReceipt,
} from "viem";
import { createChainClient } from "../../src/chain/client.ts";
import { type Address, type Hex, ZERO_ADDRESS } from "../../src/core/hex.ts";
import { type Anvil, startAnvil } from "../../src/devchain/anvil.ts";
import { CONTRACT_NAMES, type ContractName, loadArtifact } from "../../src/devchain/artifacts.ts";
import {
  connectDevChain,
  createdAddresses,
  type DevChain,
  deployArtifact,
  devAddress,
  fundAndUnlock,
  sendContractTx,
} from "../../src/devchain/deploy.ts";
import { inspectContract } from "../../src/indexer/classify/inspect.ts";

const topic = (signature: string): Hex => keccak256(stringToHex(signature));
const TRANSFER = topic("Transfer(address,address,uint256)");
const MAX_UINT256 = 2n ** 256n - 1n;
/** A value as one 32-byte word, without 0x: how topics and ABI data hold it. */
const word = (value: bigint | Address): string =>
  (typeof value === "bigint" ? value.toString(16) : value.slice(2)).padStart(64, "0");
const words = (...values: (bigint | Address)[]): Hex => `0x${values.map(word).join("")}`;
const topicOf = (value: bigint | Address): Hex => `0x${word(value)}`;
const [deployer, alice, bob, carol] = [devAddress(0), devAddress(1), devAddress(2), devAddress(3)];

/** Decoded event, with addresses lower-cased so they compare with ours. */
function decode(name: ContractName, log: Log): { eventName: string; args: Record<string, unknown> } {
  const decoded = decodeEventLog({ abi: loadArtifact(name).abi, data: log.data, topics: log.topics });
  const args: Record<string, unknown> = {};
  for (const [key, value] of Object.entries((decoded.args ?? {}) as Record<string, unknown>)) {
    args[key] = typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value) ? value.toLowerCase() : value;
  }
  return { eventName: decoded.eventName ?? "", args };
}

describe("contracts on anvil", () => {
  let anvil: Anvil;
  let chain: DevChain;

  before(async () => {
    anvil = await startAnvil();
    chain = connectDevChain(anvil.url);
  });
  after(async () => {
    await anvil?.stop();
  });

  async function read(name: ContractName, address: Address, functionName: string, args: unknown[] = []) {
    return chain.publicClient.readContract({ address, abi: loadArtifact(name).abi, functionName, args });
  }

  function send(
    name: ContractName,
    address: Address,
    functionName: string,
    args: unknown[],
    from: Address,
    value?: bigint,
  ): Promise<TransactionReceipt> {
    return sendContractTx(chain, { address, abi: loadArtifact(name).abi, functionName, args, from, value });
  }

  test("every contract deploys and its runtime code is the artifact's", async () => {
    const args: Record<ContractName, unknown[]> = {
      AirdropSprayer: [],
      AnyTokenAggregator: [alice, 100n],
      BidMarket: [alice, 250],
      CanonicalWETH9: [],
      CollectionFactory: [],
      CreationFlood: [],
      CryptoPunksMarket: [10000n],
      DealDesk: [],
      EditionShop: [],
      EntryPointV07: [],
      EscrowMarket: [alice, 250],
      EventForge: [],
      FlashLender: [],
      LegacyERC721: ["Kitties", "CK"],
      LoanDesk: [],
      LocalConduitController: [],
      MevRelay: [],
      MultiSendV150: [],
      NftSwap: [],
      PaidMintERC721: ["Minted", "MINT", 10n ** 16n],
      PeggedPool: [],
      Purse: [],
      SafeProxyFactoryV150: [],
      SafeV150: [],
      // Filled in with the controller deployed before it (the names are in order).
      Seaport: [],
      SimpleAccountFactoryV07: [alice],
      SwapRouter: [],
      SweepAggregator: [],
      TestERC1155: ["https://nft.example/{id}"],
      TestERC20: ["Token", "TOK"],
      TestERC721: ["Apes", "APE"],
      TestERC721Consecutive: ["Seq", "SEQ", [alice], [10n]],
      TestMarketplace: [],
      TestPriceFeedPair: [],
      TestStablecoin: ["USD Coin", "USDC"],
      UniswapV2Factory: [alice],
      UniswapV2Pair: [],
      WETH9: [],
    };
    let controller: Address | undefined;
    for (const name of CONTRACT_NAMES) {
      // Seaport asks its conduit controller for the conduits' code hashes as it is built.
      const deployment = await deployArtifact(chain, name, name === "Seaport" ? [controller] : args[name]);
      if (name === "LocalConduitController") controller = deployment.address;
      const code = await chain.publicClient.getCode({ address: deployment.address });
      const runtime = loadArtifact(name).deployedBytecode;
      // A package that ships creation code only: the code deployed is at least there.
      if (runtime === null) assert.ok((code?.length ?? 0) > 2, name);
      else assert.equal(withoutImmutables(code ?? "0x", runtime), runtime, name);
      assert.equal(deployment.contractName, name);
    }
  });

  test("TestERC721: batch mints emit one indexed Transfer per token; burn takes owner or approval", async () => {
    const { address } = await deployArtifact(chain, "TestERC721", ["Apes", "APE"]);
    const receipt = await send("TestERC721", address, "mintBatch", [alice, 100n, 5n], alice);
    assert.equal(receipt.logs.length, 5);
    receipt.logs.forEach((log, i) => {
      assert.equal(log.topics.length, 4);
      assert.equal(log.topics[0], TRANSFER);
      assert.deepEqual(decode("TestERC721", log).args, {
        from: ZERO_ADDRESS,
        to: alice,
        tokenId: BigInt(100 + i),
      });
    });
    assert.equal(await read("TestERC721", address, "tokenURI", [101n]), "https://nft.example/APE/101");
    await assert.rejects(send("TestERC721", address, "burn", [101n], bob), /ERC721InsufficientApproval/);
    await send("TestERC721", address, "approve", [bob, 101n], alice);
    const burn = await send("TestERC721", address, "burn", [101n], bob);
    assert.equal(decode("TestERC721", burn.logs.at(-1) as Log).args.to, ZERO_ADDRESS);
    await assert.rejects(read("TestERC721", address, "ownerOf", [101n]), /ERC721NonexistentToken/);
    assert.equal(await read("TestERC721", address, "balanceOf", [alice]), 4n);
  });

  test("TestERC721Consecutive: constructor ranges are ERC-2309 ConsecutiveTransfer; later moves are ordinary", async () => {
    const deployment = await deployArtifact(chain, "TestERC721Consecutive", [
      "Seq",
      "SEQ",
      [alice, bob],
      [5n, 3n],
    ]);
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: deployment.txHash });
    const consecutive = topic("ConsecutiveTransfer(uint256,uint256,address,address)");
    assert.deepEqual(
      receipt.logs.map((l) => l.topics[0]),
      [consecutive, consecutive],
    );
    assert.deepEqual(decode("TestERC721Consecutive", receipt.logs[0] as Log).args, {
      fromTokenId: 0n,
      toTokenId: 4n,
      fromAddress: ZERO_ADDRESS,
      toAddress: alice,
    });
    assert.deepEqual(decode("TestERC721Consecutive", receipt.logs[1] as Log).args, {
      fromTokenId: 5n,
      toTokenId: 7n,
      fromAddress: ZERO_ADDRESS,
      toAddress: bob,
    });
    const address = deployment.address;
    assert.equal(String(await read("TestERC721Consecutive", address, "ownerOf", [6n])).toLowerCase(), bob);
    const moved = await send("TestERC721Consecutive", address, "transferFrom", [alice, carol, 2n], alice);
    assert.deepEqual(decode("TestERC721Consecutive", moved.logs.at(-1) as Log).args, {
      from: alice,
      to: carol,
      tokenId: 2n,
    });
    await send("TestERC721Consecutive", address, "burn", [3n], alice);
    await assert.rejects(read("TestERC721Consecutive", address, "ownerOf", [3n]), /ERC721NonexistentToken/);
    assert.equal(await read("TestERC721Consecutive", address, "balanceOf", [alice]), 3n);
    // Ordinary mints are allowed after construction, above the batch-minted range.
    await send("TestERC721Consecutive", address, "mint", [carol, 8n], carol);
    assert.equal(await read("TestERC721Consecutive", address, "balanceOf", [carol]), 2n);
  });

  test("TestERC1155: batches, and burns only by the holder or an approved operator", async () => {
    const { address } = await deployArtifact(chain, "TestERC1155", ["https://nft.example/{id}"]);
    const minted = await send(
      "TestERC1155",
      address,
      "mintBatch",
      [alice, [1n, 2n], [10n, 20n], "0x"],
      alice,
    );
    assert.deepEqual(decode("TestERC1155", minted.logs[0] as Log), {
      eventName: "TransferBatch",
      args: { operator: alice, from: ZERO_ADDRESS, to: alice, ids: [1n, 2n], values: [10n, 20n] },
    });
    await assert.rejects(
      send("TestERC1155", address, "burn", [alice, 1n, 1n], bob),
      /ERC1155MissingApprovalForAll/,
    );
    await send("TestERC1155", address, "setApprovalForAll", [bob, true], alice);
    const burned = await send("TestERC1155", address, "burnBatch", [alice, [1n, 2n], [4n, 5n]], bob);
    assert.deepEqual(decode("TestERC1155", burned.logs[0] as Log).args, {
      operator: bob,
      from: alice,
      to: ZERO_ADDRESS,
      ids: [1n, 2n],
      values: [4n, 5n],
    });
    await send("TestERC1155", address, "burn", [alice, 2n, 1n], alice);
    assert.equal(await read("TestERC1155", address, "balanceOf", [alice, 2n]), 14n);
  });

  test("TestERC20 has 18 decimals and an open mint", async () => {
    const { address } = await deployArtifact(chain, "TestERC20", ["Token", "TOK"]);
    assert.equal(await read("TestERC20", address, "decimals"), 18);
    await send("TestERC20", address, "mint", [alice, 5n], bob);
    assert.equal(await read("TestERC20", address, "balanceOf", [alice]), 5n);
  });

  test("LegacyERC721: unindexed Transfer (one topic, 96 bytes of data) and the draft interface id only", async () => {
    const { address } = await deployArtifact(chain, "LegacyERC721", ["Kitties", "CK"]);
    const minted = await send("LegacyERC721", address, "mint", [alice], bob);
    const log = minted.logs[0] as Log;
    assert.deepEqual(log.topics, [TRANSFER]);
    assert.equal(log.data.length, 2 + 96 * 2);
    assert.deepEqual(decode("LegacyERC721", log).args, { from: ZERO_ADDRESS, to: alice, tokenId: 1n });
    await send("LegacyERC721", address, "mint", [alice], alice);
    const moved = await send("LegacyERC721", address, "transfer", [bob, 2n], alice);
    assert.deepEqual(moved.logs[0]?.topics, [TRANSFER]);
    assert.deepEqual(decode("LegacyERC721", moved.logs[0] as Log).args, {
      from: alice,
      to: bob,
      tokenId: 2n,
    });
    assert.equal(await read("LegacyERC721", address, "totalSupply"), 2n);
    assert.equal(String(await read("LegacyERC721", address, "ownerOf", [2n])).toLowerCase(), bob);
    assert.equal(await read("LegacyERC721", address, "name"), "Kitties");
    assert.equal(await read("LegacyERC721", address, "symbol"), "CK");
    assert.equal(await read("LegacyERC721", address, "supportsInterface", ["0x01ffc9a7"]), true);
    assert.equal(await read("LegacyERC721", address, "supportsInterface", ["0x9a20483d"]), true);
    assert.equal(await read("LegacyERC721", address, "supportsInterface", ["0x80ac58cd"]), false);
    assert.equal(await read("LegacyERC721", address, "supportsInterface", ["0xffffffff"]), false);
    // Draft semantics: the owner itself may not use transferFrom without an approval.
    await assert.rejects(send("LegacyERC721", address, "transferFrom", [alice, carol, 1n], alice));
    await send("LegacyERC721", address, "approve", [carol, 1n], alice);
    await send("LegacyERC721", address, "transferFrom", [alice, carol, 1n], carol);
    assert.equal(await read("LegacyERC721", address, "balanceOf", [carol]), 1n);
  });

  describe("CryptoPunksMarket", () => {
    let punks: Address;
    const events = (receipt: TransactionReceipt) => receipt.logs.map((l) => decode("CryptoPunksMarket", l));

    before(async () => {
      punks = (await deployArtifact(chain, "CryptoPunksMarket", [100n])).address;
    });

    test("initial assignment is owner-only and emits Assign alone", async () => {
      await assert.rejects(send("CryptoPunksMarket", punks, "setInitialOwner", [alice, 0n], alice));
      const one = await send("CryptoPunksMarket", punks, "setInitialOwner", [alice, 0n], deployer);
      assert.deepEqual(events(one), [{ eventName: "Assign", args: { to: alice, punkIndex: 0n } }]);
      assert.equal(one.logs[0]?.topics[0], topic("Assign(address,uint256)"));
      const many = await send(
        "CryptoPunksMarket",
        punks,
        "setInitialOwners",
        [
          [alice, bob, bob],
          [1n, 2n, 3n],
        ],
        deployer,
      );
      assert.deepEqual(
        events(many).map((e) => e.eventName),
        ["Assign", "Assign", "Assign"],
      );
      // getPunk only opens once the owner declares the assignment done.
      await assert.rejects(send("CryptoPunksMarket", punks, "getPunk", [50n], carol));
      await send("CryptoPunksMarket", punks, "allInitialOwnersAssigned", [], deployer);
      const claimed = await send("CryptoPunksMarket", punks, "getPunk", [50n], carol);
      assert.deepEqual(events(claimed), [{ eventName: "Assign", args: { to: carol, punkIndex: 50n } }]);
      assert.equal(await read("CryptoPunksMarket", punks, "balanceOf", [bob]), 2n);
      assert.equal(await read("CryptoPunksMarket", punks, "punksRemainingToAssign"), 95n);
      assert.equal(await read("CryptoPunksMarket", punks, "decimals"), 0);
      assert.equal(await read("CryptoPunksMarket", punks, "totalSupply"), 100n);
      assert.equal(await read("CryptoPunksMarket", punks, "name"), "CRYPTOPUNKS");
    });

    test("transferPunk emits the ERC-20-shaped Transfer then PunkTransfer", async () => {
      const receipt = await send("CryptoPunksMarket", punks, "transferPunk", [carol, 1n], alice);
      assert.deepEqual(events(receipt), [
        { eventName: "Transfer", args: { from: alice, to: carol, value: 1n } },
        { eventName: "PunkTransfer", args: { from: alice, to: carol, punkIndex: 1n } },
      ]);
      // Transfer(address indexed from, address indexed to, uint256 value): three topics, the value in data.
      assert.equal(receipt.logs[0]?.topics.length, 3);
      assert.equal(receipt.logs[1]?.topics[0], topic("PunkTransfer(address,address,uint256)"));
    });

    test("buyPunk emits Transfer, PunkNoLongerForSale, then PunkBought carrying the price", async () => {
      const price = parseEther("1.5");
      const offered = await send("CryptoPunksMarket", punks, "offerPunkForSale", [2n, price], bob);
      assert.deepEqual(events(offered), [
        { eventName: "PunkOffered", args: { punkIndex: 2n, minValue: price, toAddress: ZERO_ADDRESS } },
      ]);
      const paid = price + 1n;
      const bought = await send("CryptoPunksMarket", punks, "buyPunk", [2n], carol, paid);
      assert.deepEqual(events(bought), [
        { eventName: "Transfer", args: { from: bob, to: carol, value: 1n } },
        { eventName: "PunkNoLongerForSale", args: { punkIndex: 2n } },
        { eventName: "PunkBought", args: { punkIndex: 2n, value: paid, fromAddress: bob, toAddress: carol } },
      ]);
      assert.equal(bought.logs[2]?.topics[0], topic("PunkBought(uint256,uint256,address,address)"));
      assert.equal(bought.logs[2]?.topics.length, 4);
      assert.equal(await read("CryptoPunksMarket", punks, "pendingWithdrawals", [bob]), paid);
    });

    test("acceptBidForPunk emits Transfer then a PunkBought with value 0 and toAddress 0x0, as the original", async () => {
      const bid = parseEther("2");
      const entered = await send("CryptoPunksMarket", punks, "enterBidForPunk", [3n], alice, bid);
      assert.deepEqual(events(entered), [
        { eventName: "PunkBidEntered", args: { punkIndex: 3n, value: bid, fromAddress: alice } },
      ]);
      const accepted = await send("CryptoPunksMarket", punks, "acceptBidForPunk", [3n, bid], bob);
      assert.deepEqual(events(accepted), [
        { eventName: "Transfer", args: { from: bob, to: alice, value: 1n } },
        {
          eventName: "PunkBought",
          args: { punkIndex: 3n, value: 0n, fromAddress: bob, toAddress: ZERO_ADDRESS },
        },
      ]);
      assert.equal(
        String(await read("CryptoPunksMarket", punks, "punkIndexToAddress", [3n])).toLowerCase(),
        alice,
      );
      assert.equal(
        await read("CryptoPunksMarket", punks, "pendingWithdrawals", [bob]),
        parseEther("1.5") + 1n + bid,
      );
    });

    test("bids can be withdrawn and proceeds paid out", async () => {
      await send("CryptoPunksMarket", punks, "enterBidForPunk", [50n], bob, 7n);
      const withdrawn = await send("CryptoPunksMarket", punks, "withdrawBidForPunk", [50n], bob);
      assert.deepEqual(events(withdrawn), [
        { eventName: "PunkBidWithdrawn", args: { punkIndex: 50n, value: 7n, fromAddress: bob } },
      ]);
      const before = await chain.publicClient.getBalance({ address: bob });
      const receipt = await send("CryptoPunksMarket", punks, "withdraw", [], bob);
      const after = await chain.publicClient.getBalance({ address: bob });
      const fee = receipt.gasUsed * receipt.effectiveGasPrice;
      assert.equal(after - before + fee, parseEther("3.5") + 1n);
      assert.equal(await read("CryptoPunksMarket", punks, "pendingWithdrawals", [bob]), 0n);
    });
  });

  test("CollectionFactory: CREATE2 lands at the predicted address; CREATE at the factory's nonce", async () => {
    const factory = (await deployArtifact(chain, "CollectionFactory")).address;
    const salt = keccak256(stringToHex("collection salt"));
    const artifact = loadArtifact("TestERC721");
    const initCode = `${artifact.bytecode}${encodeAbiParameters([{ type: "string" }, { type: "string" }], ["Made", "MADE"]).slice(2)}`;
    const predicted = getContractAddress({
      opcode: "CREATE2",
      from: factory,
      salt,
      bytecode: initCode as Hex,
    });
    assert.equal(
      String(await read("CollectionFactory", factory, "predictERC721", [salt, "Made", "MADE"])),
      predicted,
    );

    const created = await send("CollectionFactory", factory, "deployERC721", [salt, "Made", "MADE"], alice);
    assert.equal(created.contractAddress, null, "a factory creation is not a top-level deployment");
    const event = decode("CollectionFactory", created.logs.at(-1) as Log);
    assert.equal(event.eventName, "CollectionCreated");
    assert.equal(event.args.collection, predicted.toLowerCase());
    assert.equal(event.args.creator, alice);
    assert.equal(event.args.create2, true);
    assert.equal(await chain.publicClient.getCode({ address: predicted }), artifact.deployedBytecode);
    assert.equal(await read("TestERC721", predicted, "name"), "Made");
    // Same salt and arguments again: CREATE2 collides and the call fails.
    await assert.rejects(send("CollectionFactory", factory, "deployERC721", [salt, "Made", "MADE"], alice));

    const nonce = await chain.publicClient.getTransactionCount({ address: factory });
    const plain = await send("CollectionFactory", factory, "deployERC721WithCreate", ["Plain", "PLN"], bob);
    const expected = getContractAddress({ from: factory, nonce: BigInt(nonce) }).toLowerCase();
    const plainEvent = decode("CollectionFactory", plain.logs.at(-1) as Log);
    assert.equal(plainEvent.args.collection, expected);
    assert.equal(plainEvent.args.create2, false);

    const editionSalt = keccak256(stringToHex("editions"));
    const predicted1155 = await read("CollectionFactory", factory, "predictERC1155", [
      editionSalt,
      "ipfs://x/{id}",
    ]);
    await send("CollectionFactory", factory, "deployERC1155", [editionSalt, "ipfs://x/{id}"], carol);
    assert.equal(await read("TestERC1155", predicted1155 as Address, "uri", [1n]), "ipfs://x/{id}");
  });

  test("TestMarketplace: an ERC-20 payment and the token move in the same transaction", async () => {
    const nft = (await deployArtifact(chain, "TestERC721", ["Apes", "APE"])).address;
    const currency = (await deployArtifact(chain, "TestERC20", ["Wrapped", "W"])).address;
    const market = (await deployArtifact(chain, "TestMarketplace")).address;
    // A buyer beyond the ten accounts anvil unlocks.
    const buyer = devAddress(25);
    await assert.rejects(send("TestERC20", currency, "mint", [buyer, 1000n], buyer));
    await fundAndUnlock(chain, [buyer], parseEther("10"));
    assert.equal(await chain.publicClient.getBalance({ address: buyer }), parseEther("10"));
    await send("TestERC721", nft, "mint", [alice, 1n], alice);
    await send("TestERC721", nft, "setApprovalForAll", [market, true], alice);
    await send("TestMarketplace", market, "list", [nft, 1n, currency, 100n], alice);
    await send("TestERC20", currency, "mint", [buyer, 1000n], buyer);
    await send("TestERC20", currency, "approve", [market, 1000n], buyer);
    const sale = await send("TestMarketplace", market, "buy", [nft, 1n], buyer);
    const transfers = sale.logs.filter((l) => l.topics[0] === TRANSFER);
    assert.deepEqual(
      transfers.map((l) => [l.address.toLowerCase(), l.topics.length]),
      [
        [currency, 3],
        [nft, 4],
      ],
    );
    assert.equal(await read("TestERC20", currency, "balanceOf", [alice]), 100n);
    assert.equal(String(await read("TestERC721", nft, "ownerOf", [1n])).toLowerCase(), buyer);
    // The listing is spent.
    await assert.rejects(send("TestMarketplace", market, "buy", [nft, 1n], carol), /NotListed/);
  });

  describe("EventForge", () => {
    const TRANSFER_SINGLE = topic("TransferSingle(address,address,address,uint256,uint256)");
    const TRANSFER_BATCH = topic("TransferBatch(address,address,address,uint256[],uint256[])");
    const CONSECUTIVE = topic("ConsecutiveTransfer(uint256,uint256,address,address)");
    let forge: Address;
    const call = (functionName: string, args: unknown[]): Hex =>
      encodeFunctionData({ abi: loadArtifact("EventForge").abi, functionName, args });
    const raw = (receipt: TransactionReceipt) =>
      receipt.logs.map((l) => ({ address: l.address.toLowerCase(), topics: l.topics, data: l.data }));

    before(async () => {
      forge = (await deployArtifact(chain, "EventForge")).address;
    });

    test("transferSingle: 2^256-1 units nine times in one transaction, no balance behind them", async () => {
      const single = call("transferSingle", [alice, ZERO_ADDRESS, bob, 7n, MAX_UINT256]);
      const receipt = await send("EventForge", forge, "multicall", [Array(9).fill(single)], carol);
      const expected = {
        address: forge,
        topics: [TRANSFER_SINGLE, topicOf(alice), topicOf(ZERO_ADDRESS), topicOf(bob)],
        data: words(7n, MAX_UINT256),
      };
      assert.deepEqual(raw(receipt), Array(9).fill(expected));
      // Sent by carol, naming alice as the operator and nobody's balance checked.
      assert.equal(receipt.from.toLowerCase(), carol);
    });

    test("transferBatch: ids and values of different lengths, encoded as given", async () => {
      const receipt = await send(
        "EventForge",
        forge,
        "transferBatch",
        [bob, alice, carol, [1n, MAX_UINT256], [5n]],
        bob,
      );
      assert.deepEqual(raw(receipt), [
        {
          address: forge,
          topics: [TRANSFER_BATCH, topicOf(bob), topicOf(alice), topicOf(carol)],
          // Offsets of the two arrays, then each array's length and elements.
          data: words(0x40n, 0xa0n, 2n, 1n, MAX_UINT256, 1n, 5n),
        },
      ]);
      assert.deepEqual(decode("EventForge", receipt.logs[0] as Log).args, {
        operator: bob,
        from: alice,
        to: carol,
        ids: [1n, MAX_UINT256],
        values: [5n],
      });
    });

    test("consecutive: the widest range, several times in one call, and a reversed one", async () => {
      const widest = await send(
        "EventForge",
        forge,
        "consecutive",
        [0n, MAX_UINT256, ZERO_ADDRESS, alice, 3n],
        bob,
      );
      assert.deepEqual(
        raw(widest),
        Array(3).fill({
          address: forge,
          topics: [CONSECUTIVE, topicOf(0n), topicOf(ZERO_ADDRESS), topicOf(alice)],
          data: words(MAX_UINT256),
        }),
      );
      const reversed = await send("EventForge", forge, "consecutive", [10n, 2n, alice, bob, 1n], bob);
      assert.deepEqual(raw(reversed), [
        {
          address: forge,
          topics: [CONSECUTIVE, topicOf(10n), topicOf(alice), topicOf(bob)],
          data: words(2n),
        },
      ]);
      const none = await send("EventForge", forge, "consecutive", [0n, 1n, alice, bob, 0n], bob);
      assert.deepEqual(none.logs, []);
    });

    test("Transfer in every layout from one contract: ERC-721, ERC-20, and neither", async () => {
      const receipt = await send(
        "EventForge",
        forge,
        "multicall",
        [
          [
            call("erc721Transfer", [alice, bob, MAX_UINT256]),
            call("erc20Transfer", [alice, bob, 5n]),
            call("malformedTransfer", [alice, bob, false, 0n, "0x"]),
            call("malformedTransfer", [alice, bob, false, 0n, words(1n, 2n)]),
            call("malformedTransfer", [alice, bob, true, 9n, "0x01"]),
          ],
        ],
        carol,
      );
      const from = topicOf(alice);
      const to = topicOf(bob);
      assert.deepEqual(raw(receipt), [
        { address: forge, topics: [TRANSFER, from, to, topicOf(MAX_UINT256)], data: "0x" },
        { address: forge, topics: [TRANSFER, from, to], data: words(5n) },
        { address: forge, topics: [TRANSFER, from, to], data: "0x" },
        { address: forge, topics: [TRANSFER, from, to], data: words(1n, 2n) },
        { address: forge, topics: [TRANSFER, from, to, topicOf(9n)], data: "0x01" },
      ]);
    });

    test("rawLog: zero to four topics and any data; a fifth topic is refused", async () => {
      // A TransferBatch whose first array offset points past the end of its data.
      const badOffsets = words(0x1000n, 0x40n);
      const receipt = await send(
        "EventForge",
        forge,
        "multicall",
        [
          [
            call("rawLog", [[], "0xff"]),
            call("rawLog", [[TRANSFER], words(alice, bob, 3n)]),
            call("rawLog", [[TRANSFER_BATCH, topicOf(alice), topicOf(alice), topicOf(bob)], badOffsets]),
          ],
        ],
        carol,
      );
      assert.deepEqual(raw(receipt), [
        { address: forge, topics: [], data: "0xff" },
        { address: forge, topics: [TRANSFER], data: words(alice, bob, 3n) },
        {
          address: forge,
          topics: [TRANSFER_BATCH, topicOf(alice), topicOf(alice), topicOf(bob)],
          data: badOffsets,
        },
      ]);
      await assert.rejects(
        send(
          "EventForge",
          forge,
          "rawLog",
          [[TRANSFER, TRANSFER, TRANSFER, TRANSFER, TRANSFER], "0x"],
          carol,
        ),
        /TooManyTopics\(5\)/,
      );
    });

    test("answers ERC-165 for ERC-1155 only, and its code alone classifies it as an ERC-1155", async () => {
      assert.equal(await read("EventForge", forge, "supportsInterface", ["0x01ffc9a7"]), true);
      assert.equal(await read("EventForge", forge, "supportsInterface", ["0xd9b67a26"]), true);
      assert.equal(await read("EventForge", forge, "supportsInterface", ["0x80ac58cd"]), false);
      assert.equal(await read("EventForge", forge, "supportsInterface", ["0xffffffff"]), false);
      const client = createChainClient({ url: anvil.url });
      try {
        const inspection = await inspectContract(client, forge, new Set());
        assert.deepEqual(inspection.types, ["TYPE_ERC1155"]);
      } finally {
        await client.close();
      }
    });
  });

  describe("CreationFlood", () => {
    /** Under anvil's default 30M block gas limit: each child costs 37,526 gas. */
    const FIT_PER_TX = 798n;

    test("spawn fills a 30M-gas transaction with 798 children, each with GST2's 27-byte runtime, and logs nothing", async () => {
      const factory = (await deployArtifact(chain, "CreationFlood")).address;
      const abi = loadArtifact("CreationFlood").abi;
      const firstNonce = await chain.publicClient.getTransactionCount({ address: factory });
      assert.equal(firstNonce, 1);
      const gas = 30_000_000n;
      const receipt = await sendContractTx(chain, {
        address: factory,
        abi,
        functionName: "spawn",
        args: [FIT_PER_TX],
        from: alice,
        gas,
      });
      assert.deepEqual(receipt.logs, []);
      assert.equal(receipt.contractAddress, null);
      assert.equal(
        await chain.publicClient.getTransactionCount({ address: factory }),
        1 + Number(FIT_PER_TX),
      );

      const runtime = `0x73${factory.slice(2)}3318585733ff`;
      const children = createdAddresses(factory, firstNonce, Number(FIT_PER_TX) + 1);
      const codes: (Hex | undefined)[] = [];
      for (let i = 0; i < children.length; i += 100) {
        const chunk = children.slice(i, i + 100);
        codes.push(...(await Promise.all(chunk.map((address) => chain.publicClient.getCode({ address })))));
      }
      assert.equal(codes.filter((code) => code === runtime).length, Number(FIT_PER_TX));
      assert.equal(codes.at(-1), undefined, "nothing past the last child");
      // Every call but the factory's fails, as an indexer's eth_call of name() would.
      await assert.rejects(chain.publicClient.call({ to: children[0], data: "0x06fdde03" }));

      // One child more runs out of gas, and the whole transaction with it.
      await assert.rejects(
        sendContractTx(chain, {
          address: factory,
          abi,
          functionName: "spawn",
          args: [FIT_PER_TX + 1n],
          from: alice,
          gas,
        }),
        /reverted/,
      );
      assert.equal(
        await chain.publicClient.getTransactionCount({ address: factory }),
        1 + Number(FIT_PER_TX),
      );
    });
  });
});

/**
 * Runtime code with the constructor's immutable values zeroed where the artifact has zeros: the
 * deployment writes them into the code (a market's fee, its owner), the artifact leaves the places
 * empty. Anywhere the artifact has a non-zero byte the two must still agree.
 */
function withoutImmutables(code: string, artifact: string): string {
  if (code.length !== artifact.length) return code;
  let out = "";
  for (let i = 0; i < code.length; i += 2) {
    const theirs = artifact.slice(i, i + 2);
    out += theirs === "00" ? "00" : code.slice(i, i + 2);
  }
  return out;
}

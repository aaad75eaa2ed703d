/**
 * The API's one implementation, behind both protocols. Each operation takes the request's fields
 * by their `.proto` names, as REST (path and query strings) or gRPC (the decoded message's values)
 * hands them in, checks them with `params.ts`, reads the store of its chain, and returns the
 * response message. The adapters only move fields in and messages out.
 */
import { create, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import type { Address } from "../core/hex.ts";
import { CollectionsService } from "../gen/mintlens/v1beta2/collections_pb.ts";
import { FoundationalService } from "../gen/mintlens/v1beta2/foundational_pb.ts";
import { MarketplacesService } from "../gen/mintlens/v1beta2/marketplaces_pb.ts";
import { WalletsService } from "../gen/mintlens/v1beta2/wallets_pb.ts";
import type { Queryable } from "../store/pg/database.ts";
import { collectionFacts } from "../store/read/collection.ts";
import { listContracts } from "../store/read/contracts.ts";
import { floorPrice } from "../store/read/floor.ts";
import { rawMetadata } from "../store/read/metadata.ts";
import { nftDetails } from "../store/read/nft.ts";
import { blockBounds, listNftTransfers } from "../store/read/nft-transfers.ts";
import { listOwners } from "../store/read/owners.ts";
import { collectionSeries, type SeriesPoint } from "../store/read/series.ts";
import { NOT_JUDGED, spamVerdicts } from "../store/read/spam.ts";
import { listTokenOwners } from "../store/read/token-owners.ts";
import { type RankingMetric, topCollections } from "../store/read/top.ts";
import { listNumericTraits, listStringTraits } from "../store/read/traits.ts";
import type { IndexedBlock, VersionParts } from "../store/read/version.ts";
import { listWalletNfts } from "../store/read/wallet-nfts.ts";
import { behindError } from "./block-tags.ts";
import type { DataVersion } from "./data-version.ts";
import { InvalidArgumentError, NotFoundError } from "./errors.ts";
import { seriesGrid } from "./grid.ts";
import {
  addressPart,
  decimalPart,
  microsPart,
  naturalPart,
  nullable,
  pageTokens,
  queryFingerprint,
  textPart,
} from "./page-token.ts";
import {
  checkPaging,
  DURATION_SECONDS,
  type Metric,
  parseAddress,
  parseBoolean,
  parseContractTypes,
  parseDuration,
  parseGroupByPeriod,
  parseLabels,
  parseLimit,
  parseMetric,
  parseOffset,
  parseOptionalAddress,
  parsePageToken,
  parseSortDirection,
  parseTimestamp,
  parseTokenId,
  type RawScalar,
  single,
} from "./params.ts";
import { type Answer, answer, type ResponseCache } from "./response-cache.ts";
import {
  collectionMetadataMessage,
  collectionTotalsMessage,
  contractMessage,
  floorPriceMessage,
  nftDetailsMessage,
  nftTransferMessage,
  numericTraitMessage,
  ownerMessage,
  ownersCountPoint,
  pricePoint,
  rawMetadataMessage,
  salesVolumePoint,
  stringTraitMessage,
  supplyPoints,
  tokenOwnerMessage,
  topCollectionMessage,
  walletNftMessage,
} from "./responses.ts";

/** A request's fields by their `.proto` names: strings from REST, message values from gRPC. */
export type RequestFields = Readonly<Record<string, RawScalar | readonly RawScalar[]>>;

/** What a request asks of the data beside its fields, and what its answer reflects. */
export interface CallContext {
  /** The request's `minBlock`: answered from data at this block or newer, or refused. */
  minBlock?: bigint | undefined;
  /**
   * Set by `run` once the data version is read (before any query), failing or not: the newest
   * indexed block the answer's data holds at least. Unset before the first block is indexed.
   */
  block?: IndexedBlock | undefined;
}

/** One operation of the API: a method of the `.proto` services and its implementation. */
export interface Operation {
  method: DescMethod;
  /** Checks the request (throwing INVALID_ARGUMENT naming the field) and answers it. */
  run(fields: RequestFields, context?: CallContext): Promise<Answer>;
}

export interface ApiServiceOptions {
  sql: Queryable;
  chainId: number;
  /** The chain's data version, which answers are cached under. */
  version: DataVersion;
  cache: ResponseCache;
  /** How long a request waits for its `minBlock` before it is refused, in ms (default 2000). */
  minBlockWaitMs?: number;
  /** What links start with in the answers (see `links.ts`: a placeholder filled in as each answer is sent). */
  imageBase?: () => string;
  now?: () => number;
}

/**
 * A checked request: the key that identifies its answer for one version of the data, and how to
 * read that answer. Only answers that show fetched metadata change with the metadata worker's work.
 */
interface Prepared {
  key: string;
  withMetadata?: boolean;
  /** The answer shows spam verdicts: it is cached under their version too. */
  withSpam?: boolean;
  read(): Promise<MessageShape<DescMessage>>;
}

/** How long a request waits for its `minBlock` by default, in ms. */
export const DEFAULT_MIN_BLOCK_WAIT_MS = 2_000;

/** Every method of the `.proto` services, each with its implementation. */
export const API_SERVICES = [
  FoundationalService,
  CollectionsService,
  MarketplacesService,
  WalletsService,
] as const;

const METRIC_OF: Readonly<Record<Metric, RankingMetric>> = {
  METRIC_SALES_VOLUME: "volume",
  METRIC_SALES_QUANTITY: "sales",
  METRIC_MAX_PRICE: "maxPrice",
  METRIC_AVG_PRICE: "avgPrice",
};

/** Page tokens of the contracts list: a contract's mint time (null when unknown) and address. */
const CONTRACT_TOKENS = pageTokens(nullable(microsPart), addressPart);
/** Page tokens of a collection's holders: units held and address. */
const OWNER_TOKENS = pageTokens(naturalPart, addressPart);
/** Page tokens of a token's holders: the address. */
const TOKEN_OWNER_TOKENS = pageTokens(addressPart);
/** Page tokens of a wallet's NFTs: the contract and token id. */
const HOLDING_TOKENS = pageTokens(addressPart, naturalPart);
/** Page tokens of string traits: the name and value (at most 256 and 1,024 characters, as normalised). */
const STRING_TRAIT_TOKENS = pageTokens(textPart(256), textPart(1_024));
/** Page tokens of numeric traits: the name and display type. */
const NUMERIC_TRAIT_TOKENS = pageTokens(textPart(256), textPart(64));
/** Page tokens of the transfers list: the block, log index and position in the log. */
const TRANSFER_TOKENS = pageTokens(naturalPart, naturalPart, naturalPart);
/** Page tokens of a ranking: the value it orders by (a decimal for the average price) and the address. */
const RANKING_TOKENS = pageTokens(decimalPart, addressPart);

/** A single-valued field: a REST parameter given more than once must agree with itself. */
function one(fields: RequestFields, name: string): RawScalar {
  const value = fields[name];
  if (value === undefined || typeof value !== "object") return value;
  return single(
    name,
    value.map((v) => String(v)),
  );
}

function many(fields: RequestFields, name: string): RawScalar | readonly RawScalar[] {
  return fields[name];
}

export function createApiService(options: ApiServiceOptions): Map<string, Operation> {
  const { sql, chainId, version, cache } = options;
  const minBlockWaitMs = options.minBlockWaitMs ?? DEFAULT_MIN_BLOCK_WAIT_MS;
  const now = options.now ?? Date.now;

  /** A series request: its key (the window resolved, so a default window moves with the day) and its points. */
  function series(fields: RequestFields): { key: string; points(): Promise<SeriesPoint[]> } {
    const contract = parseAddress(one(fields, "contract_address"));
    const duration = parseDuration(one(fields, "duration"));
    const period = parseGroupByPeriod(one(fields, "group_by_period"));
    const timestampLt = parseTimestamp(one(fields, "timestamp_lt"), "timestamp_lt");
    const includeFlagged = parseBoolean(one(fields, "include_flagged_sales"), "include_flagged_sales");
    const grid = seriesGrid({ duration, period, timestampLt, now: now() });
    return {
      key: `${contract}|${grid.start}|${grid.shape.periodSeconds}|${grid.shape.points}|${grid.end}|${includeFlagged}`,
      points: () =>
        collectionSeries(sql, chainId, contract, {
          start: new Date(grid.start * 1000),
          periodSeconds: grid.shape.periodSeconds,
          points: grid.shape.points,
          end: new Date(grid.end * 1000),
          includeFlagged,
        }),
    };
  }

  const token = (fields: RequestFields): [Address, bigint] => [
    parseAddress(one(fields, "contract_address")),
    parseTokenId(one(fields, "token_id")),
  ];

  const notMinted = () => new NotFoundError("no such NFT: the token was never minted");
  const unknownCollection = () =>
    new NotFoundError("no such collection: the indexer never saw this contract");

  const implementations: Record<string, (fields: RequestFields) => Prepared | Promise<Prepared>> = {
    listContracts(fields) {
      const limit = parseLimit(one(fields, "limit"), "contracts");
      const offset = parseOffset(one(fields, "offset"));
      const direction = parseSortDirection(one(fields, "sort_direction"), "SORT_DIRECTION_ASC");
      const types = parseContractTypes(many(fields, "contract_types") as string | readonly string[]);
      const after = parseTimestamp(one(fields, "block_timestamp_gt"), "block_timestamp_gt");
      const token = parsePageToken(one(fields, "page_token"));
      checkPaging(offset, token);
      const mintedAfter = after && new Date(after.seconds * 1000 + Math.floor(after.nanos / 1e6));
      const list = queryFingerprint("ListContracts", {
        chainId,
        direction,
        types,
        mintedAfter: after && `${after.seconds}.${after.nanos}`,
      });
      const from = token === undefined ? undefined : CONTRACT_TOKENS.read(token, list);
      return {
        key: `${limit}|${offset}|${direction}|${types.join(",")}|${mintedAfter?.getTime() ?? ""}|${token ?? ""}`,
        read: async () => {
          // One row more than asked says whether a next page exists.
          const rows = await listContracts(sql, chainId, {
            limit: limit + 1,
            offset,
            direction: direction === "SORT_DIRECTION_ASC" ? "asc" : "desc",
            types,
            mintedAfter,
            after: from && { mintTime: from[0], address: from[1] },
          });
          const page = rows.slice(0, limit);
          const last = page[page.length - 1];
          return create(FoundationalService.method.listContracts.output, {
            contracts: page.map(contractMessage),
            nextPageToken:
              rows.length > limit && last
                ? CONTRACT_TOKENS.write(list, [last.position.mintTime, last.position.address])
                : "",
          });
        },
      };
    },

    getNftDetails(fields) {
      const [contract, tokenId] = token(fields);
      return {
        key: `${contract}|${tokenId}`,
        withMetadata: true,
        read: async () => {
          const details = await nftDetails(sql, chainId, contract, tokenId);
          if (details === undefined) throw notMinted();
          return nftDetailsMessage(details, options.imageBase?.() ?? "");
        },
      };
    },

    getNftRawMetadata(fields) {
      const [contract, tokenId] = token(fields);
      return {
        key: `${contract}|${tokenId}`,
        withMetadata: true,
        read: async () => {
          const found = await rawMetadata(sql, chainId, contract, tokenId);
          if (found === undefined) throw notMinted();
          return rawMetadataMessage(found.document);
        },
      };
    },

    listTokenOwners(fields) {
      const [contract, tokenId] = token(fields);
      const limit = parseLimit(one(fields, "limit"), "owners");
      const offset = parseOffset(one(fields, "offset"));
      const pageToken = parsePageToken(one(fields, "page_token"));
      checkPaging(offset, pageToken);
      const list = queryFingerprint("ListTokenOwners", { chainId, contract, tokenId });
      const from = pageToken === undefined ? undefined : TOKEN_OWNER_TOKENS.read(pageToken, list);
      return {
        key: `${contract}|${tokenId}|${limit}|${offset}|${pageToken ?? ""}`,
        read: async () => {
          // One row more than asked says whether a next page exists.
          const rows = await listTokenOwners(sql, chainId, contract, tokenId, {
            limit: limit + 1,
            offset,
            after: from?.[0],
          });
          if (rows === undefined) throw notMinted();
          const page = rows.slice(0, limit);
          const last = page[page.length - 1];
          return create(FoundationalService.method.listTokenOwners.output, {
            owners: page.map(tokenOwnerMessage),
            nextPageToken: rows.length > limit && last ? TOKEN_OWNER_TOKENS.write(list, [last.address]) : "",
          });
        },
      };
    },

    listWalletNfts(fields) {
      const holder = parseAddress(one(fields, "address"), "address");
      const contract = parseOptionalAddress(one(fields, "contract_address"), "contract_address");
      const limit = parseLimit(one(fields, "limit"), "walletNfts");
      const offset = parseOffset(one(fields, "offset"));
      const pageToken = parsePageToken(one(fields, "page_token"));
      const includeSpam = parseBoolean(one(fields, "include_spam"), "include_spam");
      checkPaging(offset, pageToken);
      const list = queryFingerprint("ListWalletNfts", { chainId, holder, contract, includeSpam });
      const from = pageToken === undefined ? undefined : HOLDING_TOKENS.read(pageToken, list);
      return {
        key: `${holder}|${contract ?? ""}|${limit}|${offset}|${pageToken ?? ""}|${includeSpam}`,
        withMetadata: true,
        withSpam: true,
        read: async () => {
          // One row more than asked says whether a next page exists.
          const rows = await listWalletNfts(sql, chainId, holder, {
            limit: limit + 1,
            offset,
            contract,
            after: from && { contract: from[0], tokenId: from[1] },
            includeSpam,
          });
          const page = rows.slice(0, limit);
          const last = page[page.length - 1];
          const imageBase = options.imageBase?.() ?? "";
          return create(WalletsService.method.listWalletNfts.output, {
            nfts: page.map((row) => walletNftMessage(row, imageBase)),
            nextPageToken:
              rows.length > limit && last ? HOLDING_TOKENS.write(list, [last.contract, last.tokenId]) : "",
          });
        },
      };
    },

    listNftTransfers(fields) {
      const limit = parseLimit(one(fields, "limit"), "transfers");
      const offset = parseOffset(one(fields, "offset"));
      const direction = parseSortDirection(one(fields, "sort_direction"), "SORT_DIRECTION_DESC");
      const contract = parseOptionalAddress(one(fields, "contract_address"), "contract_address");
      const rawTokenId = one(fields, "token_id");
      const tokenId = rawTokenId === undefined || rawTokenId === "" ? undefined : parseTokenId(rawTokenId);
      if (tokenId !== undefined && contract === undefined) {
        throw new InvalidArgumentError(
          "token_id",
          "needs contract_address: a token id names a token of one collection",
        );
      }
      const sender = parseOptionalAddress(one(fields, "sender_address"), "sender_address");
      const recipient = parseOptionalAddress(one(fields, "recipient_address"), "recipient_address");
      const gt = parseTimestamp(one(fields, "block_timestamp_gt"), "block_timestamp_gt");
      const lt = parseTimestamp(one(fields, "block_timestamp_lt"), "block_timestamp_lt");
      const labels = parseLabels(many(fields, "labels_any") as string | readonly string[], "labels_any");
      const pageToken = parsePageToken(one(fields, "page_token"));
      checkPaging(offset, pageToken);
      // Block times are whole seconds: "after 12:00:00.5" is "after 12:00:00", "before 12:00:00.5" is "before 12:00:01".
      const after = gt && new Date(gt.seconds * 1000);
      const before = lt && new Date((lt.seconds + (lt.nanos > 0 ? 1 : 0)) * 1000);
      const list = queryFingerprint("ListNftTransfers", {
        chainId,
        direction,
        contract,
        tokenId,
        sender,
        recipient,
        after: after?.getTime(),
        before: before?.getTime(),
        labels,
      });
      const from = pageToken === undefined ? undefined : TRANSFER_TOKENS.read(pageToken, list);
      return {
        key: [
          limit,
          offset,
          direction,
          contract,
          tokenId,
          sender,
          recipient,
          after?.getTime(),
          before?.getTime(),
          labels.join(","),
          pageToken,
        ].join("|"),
        read: async () => {
          const bounds = await blockBounds(sql, chainId, { after, before });
          // One row more than asked says whether a next page exists.
          const rows = await listNftTransfers(sql, chainId, {
            limit: limit + 1,
            offset,
            direction: direction === "SORT_DIRECTION_ASC" ? "asc" : "desc",
            contract,
            tokenId,
            sender,
            recipient,
            ...bounds,
            labels,
            after: from && { blockNumber: from[0], logIndex: Number(from[1]), seq: Number(from[2]) },
          });
          const page = rows.slice(0, limit);
          const last = page[page.length - 1];
          return create(FoundationalService.method.listNftTransfers.output, {
            nftTransfers: page.map(nftTransferMessage),
            nextPageToken:
              rows.length > limit && last
                ? TRANSFER_TOKENS.write(list, [last.blockNumber, BigInt(last.logIndex), BigInt(last.seq)])
                : "",
          });
        },
      };
    },

    getTopCollections(fields) {
      const metric = parseMetric(one(fields, "metric"));
      const duration = parseDuration(one(fields, "duration"));
      const limit = parseLimit(one(fields, "limit"), "top");
      const offset = parseOffset(one(fields, "offset"));
      const token = parsePageToken(one(fields, "page_token"));
      const includeFlagged = parseBoolean(one(fields, "include_flagged_sales"), "include_flagged_sales");
      checkPaging(offset, token);
      const list = queryFingerprint("GetTopCollections", { chainId, metric, duration, includeFlagged });
      const from = token === undefined ? undefined : RANKING_TOKENS.read(token, list);
      return {
        key: `${duration}|${metric}|${limit}|${offset}|${token ?? ""}|${includeFlagged}`,
        read: async () => {
          // One row more than asked says whether a next page exists.
          const rows = await topCollections(sql, chainId, {
            windowSeconds: DURATION_SECONDS[duration],
            metric: METRIC_OF[metric],
            limit: limit + 1,
            offset,
            after: from && { value: from[0], contract: from[1] },
            includeFlagged,
          });
          const page = rows.slice(0, limit);
          const last = page[page.length - 1];
          return create(CollectionsService.method.getTopCollections.output, {
            collections: page.map((row) => topCollectionMessage(row, metric)),
            nextPageToken:
              rows.length > limit && last ? RANKING_TOKENS.write(list, [last.rankValue, last.contract]) : "",
          });
        },
      };
    },

    listCollectionOwners(fields) {
      const contract = parseAddress(one(fields, "contract_address"));
      const limit = parseLimit(one(fields, "limit"), "owners");
      const offset = parseOffset(one(fields, "offset"));
      const direction = parseSortDirection(one(fields, "sort_direction"), "SORT_DIRECTION_DESC");
      const token = parsePageToken(one(fields, "page_token"));
      checkPaging(offset, token);
      const list = queryFingerprint("ListCollectionOwners", { chainId, contract, direction });
      const from = token === undefined ? undefined : OWNER_TOKENS.read(token, list);
      return {
        key: `${contract}|${limit}|${offset}|${direction}|${token ?? ""}`,
        read: async () => {
          // One row more than asked says whether a next page exists.
          const rows = await listOwners(sql, chainId, contract, {
            limit: limit + 1,
            offset,
            direction: direction === "SORT_DIRECTION_ASC" ? "asc" : "desc",
            after: from && { units: from[0], address: from[1] },
          });
          const page = rows.slice(0, limit);
          const last = page[page.length - 1];
          return create(CollectionsService.method.listCollectionOwners.output, {
            owner: page.map(ownerMessage),
            nextPageToken:
              rows.length > limit && last ? OWNER_TOKENS.write(list, [last.units, last.address]) : "",
          });
        },
      };
    },

    getCollectionMetadata(fields) {
      const contract = parseAddress(one(fields, "contract_address"));
      const includeStats = parseBoolean(one(fields, "include_stats"), "include_stats");
      return {
        key: `${contract}|${includeStats}`,
        withSpam: true,
        read: async () => {
          const [facts, verdicts] = await Promise.all([
            collectionFacts(sql, chainId, contract, { sales: includeStats }),
            spamVerdicts(sql, chainId, [contract]),
          ]);
          if (facts === undefined) throw unknownCollection();
          return collectionMetadataMessage(facts, verdicts.get(contract) ?? NOT_JUDGED);
        },
      };
    },

    getCollectionTotals(fields) {
      const contract = parseAddress(one(fields, "contract_address"));
      return {
        key: contract,
        read: async () => {
          const facts = await collectionFacts(sql, chainId, contract, { sales: true });
          if (facts === undefined) throw unknownCollection();
          return collectionTotalsMessage(facts);
        },
      };
    },

    listStringTraits(fields) {
      const contract = parseAddress(one(fields, "contract_address"));
      const limit = parseLimit(one(fields, "limit"), "traits");
      const offset = parseOffset(one(fields, "offset"));
      const pageToken = parsePageToken(one(fields, "page_token"));
      checkPaging(offset, pageToken);
      const list = queryFingerprint("ListStringTraits", { chainId, contract });
      const from = pageToken === undefined ? undefined : STRING_TRAIT_TOKENS.read(pageToken, list);
      return {
        key: `${contract}|${limit}|${offset}|${pageToken ?? ""}`,
        withMetadata: true,
        read: async () => {
          // One row more than asked says whether a next page exists.
          const found = await listStringTraits(sql, chainId, contract, {
            limit: limit + 1,
            offset,
            after: from && { name: from[0], value: from[1] },
          });
          if (found === undefined) throw unknownCollection();
          const page = found.traits.slice(0, limit);
          const last = page[page.length - 1];
          return create(CollectionsService.method.listStringTraits.output, {
            traits: page.map((trait) => stringTraitMessage(trait, found.documents)),
            nextPageToken:
              found.traits.length > limit && last
                ? STRING_TRAIT_TOKENS.write(list, [last.name, last.value])
                : "",
          });
        },
      };
    },

    listNumericTraits(fields) {
      const contract = parseAddress(one(fields, "contract_address"));
      const limit = parseLimit(one(fields, "limit"), "traits");
      const offset = parseOffset(one(fields, "offset"));
      const pageToken = parsePageToken(one(fields, "page_token"));
      checkPaging(offset, pageToken);
      const list = queryFingerprint("ListNumericTraits", { chainId, contract });
      const from = pageToken === undefined ? undefined : NUMERIC_TRAIT_TOKENS.read(pageToken, list);
      return {
        key: `${contract}|${limit}|${offset}|${pageToken ?? ""}`,
        withMetadata: true,
        read: async () => {
          // One row more than asked says whether a next page exists.
          const rows = await listNumericTraits(sql, chainId, contract, {
            limit: limit + 1,
            offset,
            after: from && { name: from[0], displayType: from[1] },
          });
          if (rows === undefined) throw unknownCollection();
          const page = rows.slice(0, limit);
          const last = page[page.length - 1];
          return create(CollectionsService.method.listNumericTraits.output, {
            traits: page.map(numericTraitMessage),
            nextPageToken:
              rows.length > limit && last
                ? NUMERIC_TRAIT_TOKENS.write(list, [last.name, last.displayType])
                : "",
          });
        },
      };
    },

    getFloorPrice(fields) {
      const contract = parseAddress(one(fields, "contract_address"));
      return {
        key: contract,
        read: async () => {
          const floor = await floorPrice(sql, chainId, contract);
          if (floor === undefined) throw unknownCollection();
          return floorPriceMessage(floor.lowestWei, floor.usdPerWei);
        },
      };
    },

    getSupply(fields) {
      const s = series(fields);
      return {
        key: s.key,
        read: async () =>
          create(CollectionsService.method.getSupply.output, { dataPoints: supplyPoints(await s.points()) }),
      };
    },

    getOwnersCount(fields) {
      const s = series(fields);
      return {
        key: s.key,
        read: async () =>
          create(CollectionsService.method.getOwnersCount.output, {
            dataPoints: (await s.points()).map(ownersCountPoint),
          }),
      };
    },

    getPrices(fields) {
      const s = series(fields);
      return {
        key: s.key,
        read: async () =>
          create(CollectionsService.method.getPrices.output, {
            dataPoints: (await s.points()).map(pricePoint),
          }),
      };
    },

    getSalesVolume(fields) {
      const s = series(fields);
      return {
        key: s.key,
        read: async () =>
          create(CollectionsService.method.getSalesVolume.output, {
            dataPoints: (await s.points()).map(salesVolumePoint),
          }),
      };
    },
  };

  /** The version a request is answered at: the current one, or, with `minBlock`, one at that block. */
  async function versionFor(context: CallContext): Promise<VersionParts> {
    const { minBlock } = context;
    if (minBlock === undefined) {
      const at = await version.current();
      context.block = at.head;
      return at;
    }
    const started = Date.now();
    const { reached, version: at } = await version.reach(minBlock, minBlockWaitMs);
    context.block = at.head;
    if (!reached) throw behindError(minBlock, at.head, Date.now() - started);
    return at;
  }

  const operations = new Map<string, Operation>();
  for (const service of API_SERVICES) {
    for (const method of service.methods) {
      const run = implementations[method.localName];
      if (run === undefined) throw new Error(`no implementation of ${method.parent.typeName}.${method.name}`);
      operations.set(method.name, {
        method,
        async run(fields, context = {}) {
          const prepared = await run(fields);
          // Read before the query: the answer's data is at least as new as the block it is tagged with.
          const at = await versionFor(context);
          const v = `${at.chain}${prepared.withMetadata ? `+${at.metadata}` : ""}${prepared.withSpam ? `+${at.spam}` : ""}`;
          return cache.get(`${v}|${method.name}|${prepared.key}`, async () =>
            answer(method.output, await prepared.read()),
          );
        },
      });
    }
  }
  return operations;
}

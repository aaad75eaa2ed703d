/**
 * The store's rows as the API's response messages: pure, and the one place where values take
 * their wire form (amounts from wei, timestamps, enum numbers).
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type NumericDisplayType, traitPercentage } from "../core/traits.ts";
import { transferLabels } from "../core/transfer-labels.ts";
import type { Rate, ContractType as StoreContractType } from "../core/types.ts";
import { usdValue } from "../core/usd.ts";
import {
  DisplayType,
  type GetCollectionMetadataResponse,
  GetCollectionMetadataResponseSchema,
  type GetCollectionTotalsResponse,
  GetCollectionTotalsResponseSchema,
  type NumericTraitSchema,
  type OwnerSchema,
  type OwnersCountDataPoint,
  OwnersCountDataPointSchema,
  type PriceDataPoint,
  PriceDataPointSchema,
  type SalesVolumeDataPoint,
  SalesVolumeDataPointSchema,
  type StringTraitSchema,
  type SupplyDataPoint,
  SupplyDataPointSchema,
  type TopCollection,
  TopCollectionSchema,
} from "../gen/mintlens/v1beta2/collections_pb.ts";
import { AttributedBySchema } from "../gen/mintlens/v1beta2/enums_pb.ts";
import {
  type Contract,
  ContractSchema,
  type GetNftDetailsResponse,
  GetNftDetailsResponseSchema,
  type GetNftRawMetadataResponse,
  GetNftRawMetadataResponseSchema,
  type NftSchema,
  type NftTransferSchema,
  type PaymentSchema,
  RarityMethod,
  type SaleSchema,
  type TokenOwnerSchema,
  TransferParty_Type,
} from "../gen/mintlens/v1beta2/foundational_pb.ts";
import {
  type GetFloorPriceResponse,
  GetFloorPriceResponseSchema,
} from "../gen/mintlens/v1beta2/marketplaces_pb.ts";
import { type SpamVerdictSchema, SpamVerdictSource } from "../gen/mintlens/v1beta2/spam_pb.ts";
import type { WalletNftSchema } from "../gen/mintlens/v1beta2/wallets_pb.ts";
import type { CollectionFacts } from "../store/read/collection.ts";
import type { ContractListing } from "../store/read/contracts.ts";
import type { RawDocument } from "../store/read/metadata.ts";
import type { NftDetails, NftSale } from "../store/read/nft.ts";
import type { NftTransferRow, TransferPrice } from "../store/read/nft-transfers.ts";
import type { SeriesPoint } from "../store/read/series.ts";
import type { ServedSpamVerdict, SpamSource } from "../store/read/spam.ts";
import type { TokenOwner } from "../store/read/token-owners.ts";
import type { Ranked } from "../store/read/top.ts";
import type { NumericTrait, StringTrait } from "../store/read/traits.ts";
import type { WalletNft } from "../store/read/wallet-nfts.ts";
import {
  averageUnitPrice,
  formatIndexedAt,
  formatNative,
  formatTimestamp,
  formatUnits,
  formatUsd,
  uint64,
} from "./format.ts";
import { CONTRACT_TYPE, type ContractType, enumNumber, LABEL, type Metric } from "./params.ts";

const contractTypeNumber = (type: StoreContractType) => enumNumber(CONTRACT_TYPE, type as ContractType);

export function contractMessage(row: ContractListing): Contract {
  return create(ContractSchema, {
    address: row.address,
    name: row.name,
    symbol: row.symbol,
    decimals: row.decimals,
    types: row.types.map(contractTypeNumber),
    mintEvent: {
      blockTimestamp: row.mintEvent.blockTime === undefined ? "" : formatTimestamp(row.mintEvent.blockTime),
      txHash: row.mintEvent.txHash ?? "",
      minterAddress: row.mintEvent.minter ?? "",
    },
  });
}

export function topCollectionMessage(row: Ranked, metric: Metric): TopCollection {
  const init: MessageInitShape<typeof TopCollectionSchema> = {
    contractAddress: row.contract,
    contractName: row.name,
    collection: { contractAddress: row.contract, name: row.name },
    flaggedSalesCount: row.flaggedSales,
    flaggedVolume: formatNative(row.flaggedVolume),
    unpricedSalesCount: row.unpricedSales,
  };
  switch (metric) {
    case "METRIC_SALES_VOLUME":
      init.salesVolume = formatNative(row.volume);
      init.metricValue = init.salesVolume;
      break;
    case "METRIC_SALES_QUANTITY":
      init.salesCount = uint64(row.sales);
      init.metricValue = row.sales.toString();
      break;
    case "METRIC_MAX_PRICE":
      init.maxPrice = formatNative(row.maxUnitPrice);
      init.metricValue = init.maxPrice;
      break;
    case "METRIC_AVG_PRICE":
      init.avgPrice = averageUnitPrice(row.volume, row.units);
      init.metricValue = init.avgPrice;
      break;
  }
  return create(TopCollectionSchema, init);
}

// The points of a series are built as literals rather than with `create`, which reads the
// schema for every message: a series has up to 8,760 of them. Their types keep them complete.

/** Minted and burnt per point, and their running totals from the window's first point. */
export function supplyPoints(points: readonly SeriesPoint[]): SupplyDataPoint[] {
  let totalMinted = 0n;
  let totalBurned = 0n;
  return points.map((p) => {
    totalMinted += p.minted;
    totalBurned += p.burned;
    return {
      $typeName: SupplyDataPointSchema.typeName,
      timestamp: formatTimestamp(p.start),
      minted: uint64(p.minted),
      burned: uint64(p.burned),
      totalMinted: uint64(totalMinted),
      totalBurned: uint64(totalBurned),
    };
  });
}

export function ownersCountPoint(p: SeriesPoint): OwnersCountDataPoint {
  // Never below zero, whatever a partly indexed history says.
  return {
    $typeName: OwnersCountDataPointSchema.typeName,
    timestamp: formatTimestamp(p.start),
    count: uint64(p.holders),
  };
}

/** One holder of an owners list. */
export function ownerMessage(owner: {
  address: string;
  units: bigint;
}): MessageInitShape<typeof OwnerSchema> {
  return { address: owner.address, ownedCount: uint64(owner.units) };
}

export function tokenOwnerMessage(owner: TokenOwner): MessageInitShape<typeof TokenOwnerSchema> {
  return { address: owner.address, quantity: uint64(owner.quantity) };
}

export function pricePoint(p: SeriesPoint): PriceDataPoint {
  return {
    $typeName: PriceDataPointSchema.typeName,
    timestamp: formatTimestamp(p.start),
    min: formatNative(p.units === 0n ? 0n : p.minUnitPrice),
    max: formatNative(p.units === 0n ? 0n : p.maxUnitPrice),
    avg: averageUnitPrice(p.volume, p.units),
    flaggedSalesCount: p.flaggedSales,
    unpricedSalesCount: p.unpricedSales,
  };
}

export function salesVolumePoint(p: SeriesPoint): SalesVolumeDataPoint {
  return {
    $typeName: SalesVolumeDataPointSchema.typeName,
    timestamp: formatTimestamp(p.start),
    quantity: uint64(p.units),
    volume: formatNative(p.volume),
    flaggedQuantity: p.flaggedUnits,
    flaggedVolume: formatNative(p.flaggedVolume),
    unpricedQuantity: p.unpricedUnits,
  };
}

/** The type an NFT is shown with when its contract implements several: the first NFT standard found. */
const NFT_TYPE_ORDER: readonly StoreContractType[] = [
  "TYPE_ERC721",
  "TYPE_ERC1155",
  "TYPE_ERC721_LEGACY",
  "TYPE_CRYPTOPUNKS",
];

function attributedByNumber(name: string): number {
  return AttributedBySchema.values.find((v) => v.name === name)?.number ?? 0;
}

/** A trade's price as the API writes it: an NFT's last sale and the transfers list alike. */
function paymentInit(price: TransferPrice): MessageInitShape<typeof PaymentSchema> {
  return {
    totalNative: formatNative(price.totalNative),
    totalUsd: formatUsd(price.totalUsd ?? null),
    nativeTransfersTotal: formatNative(price.nativePaid),
    fungibleTransfersTotal: formatNative(price.fungiblePaid),
    attributedBy: attributedByNumber(price.attributedBy),
    // A token whose contract was never seen has no known decimals: its amount stays in base units.
    fungibleTotals: price.payments.map((p) => ({
      contractAddress: p.token,
      totalNormalized: formatUnits(p.amount, p.decimals ?? 0),
    })),
  };
}

function saleInit(sale: NftSale): MessageInitShape<typeof SaleSchema> {
  return {
    blockchainEvent: {
      txHash: sale.txHash,
      logIndex: uint64(BigInt(sale.logIndex)),
      seqIndex: uint64(BigInt(sale.seq)),
      blockNumber: uint64(sale.blockNumber),
      blockTimestamp: formatTimestamp(sale.blockTime),
    },
    recipientPaid: paymentInit(sale),
    flags: sale.flags,
  };
}

/** The payment of a transfer that delivered no trade, or of a side that was paid nothing. */
const NO_PAYMENT: MessageInitShape<typeof PaymentSchema> = {
  totalNative: "0",
  totalUsd: "0",
  nativeTransfersTotal: "0",
  fungibleTransfersTotal: "0",
  attributedBy: attributedByNumber("ATTRIBUTED_BY_NO_PAYMENTS"),
  fungibleTotals: [],
};

/** The token type of a transfer's event. */
const STANDARD_TYPE: Readonly<Record<string, StoreContractType>> = {
  erc721: "TYPE_ERC721",
  erc2309: "TYPE_ERC721",
  erc1155: "TYPE_ERC1155",
  legacy: "TYPE_ERC721_LEGACY",
  punks: "TYPE_CRYPTOPUNKS",
};

/**
 * One price for the trades a transfer delivered: one trade's own, or, for units of several sellers
 * delivered by one transfer, their sum (payments added per token; no USD value when one has none).
 */
export function combinedPrice(prices: readonly TransferPrice[]): TransferPrice | undefined {
  const [first, ...others] = prices;
  if (first === undefined) return undefined;
  if (others.length === 0) return first;
  const tokens = new Map<string, TransferPrice["payments"][number]>();
  for (const p of prices.flatMap((price) => price.payments)) {
    const seen = tokens.get(p.token);
    tokens.set(p.token, seen ? { ...seen, amount: seen.amount + p.amount } : p);
  }
  const usd = prices.map((p) => p.totalUsd);
  return {
    nativePaid: prices.reduce((sum, p) => sum + p.nativePaid, 0n),
    fungiblePaid: prices.reduce((sum, p) => sum + p.fungiblePaid, 0n),
    totalNative: prices.reduce((sum, p) => sum + p.totalNative, 0n),
    totalUsd: usd.every((u) => u !== undefined) ? addDecimals(usd as string[]) : undefined,
    attributedBy: first.attributedBy,
    payments: [...tokens.values()].sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0)),
  };
}

/** The exact sum of non-negative decimal texts. */
function addDecimals(values: readonly string[]): string {
  const scale = Math.max(0, ...values.map((v) => v.split(".")[1]?.length ?? 0));
  const units = values.reduce((sum, v) => {
    const [whole = "0", fraction = ""] = v.split(".");
    return sum + BigInt(whole + fraction.padEnd(scale, "0"));
  }, 0n);
  const text = units.toString().padStart(scale + 1, "0");
  return scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`;
}

/**
 * A transfer of the transfers list. The recipient paid the price of the trades it delivered (a sale
 * or a paid mint); the sender received it when the trade was a sale (a mint has no seller side, a
 * return no price).
 */
export function nftTransferMessage(row: NftTransferRow): MessageInitShape<typeof NftTransferSchema> {
  const paid = combinedPrice(row.trades.filter((t) => t.kind !== "return").map((t) => t.price));
  const received = combinedPrice(row.trades.filter((t) => t.kind === "sale").map((t) => t.price));
  const type = STANDARD_TYPE[row.standard];
  const owner = TransferParty_Type.OWNER;
  return {
    blockchainEvent: {
      txHash: row.txHash,
      logIndex: uint64(BigInt(row.logIndex)),
      seqIndex: uint64(BigInt(row.seq)),
      blockNumber: uint64(row.blockNumber),
      blockTimestamp: formatTimestamp(row.blockTime),
    },
    contractAddress: row.contract,
    tokenId: row.tokenId.toString(),
    tokenType: type === undefined ? 0 : contractTypeNumber(type),
    quantity: uint64(row.quantity),
    sender: { address: row.from, type: owner },
    senderReceived: received ? paymentInit(received) : NO_PAYMENT,
    recipient: { address: row.to, type: owner },
    recipientPaid: paid ? paymentInit(paid) : NO_PAYMENT,
    labels: transferLabels({ from: row.from, to: row.to, trades: row.trades, spam: row.spam }).map((l) =>
      enumNumber(LABEL, l),
    ),
  };
}

/** `imageBase` makes the cached image's path (`/images/<sha256>`) a URL of this service. */
/** An NFT as its details and a wallet's list show it. */
function nftInit(
  details: Pick<NftDetails, "contract" | "tokenId" | "types" | "collectionName" | "mint" | "metadata">,
  imageBase: string,
): MessageInitShape<typeof NftSchema> {
  const type = NFT_TYPE_ORDER.find((t) => details.types.includes(t));
  const metadata = details.metadata;
  return {
    contractAddress: details.contract,
    tokenId: details.tokenId.toString(),
    type: type === undefined ? 0 : contractTypeNumber(type),
    metadata: metadata && {
      metadataUri: { uri: metadata.uri, mimeType: metadata.mimeType },
      name: metadata.name,
      description: metadata.description,
      image: {
        uri: metadata.imageUri === "" ? "" : `${imageBase}${metadata.imageUri}`,
        uriOriginal: metadata.imageUriOriginal,
        mimeType: metadata.imageMimeType,
      },
    },
    mintEvent: details.mint && {
      txHash: details.mint.txHash,
      logIndex: uint64(BigInt(details.mint.logIndex)),
      blockTimestamp: formatTimestamp(details.mint.blockTime),
    },
    collection: { name: details.collectionName },
  };
}

export function nftDetailsMessage(details: NftDetails, imageBase = ""): GetNftDetailsResponse {
  return create(GetNftDetailsResponseSchema, {
    nft: nftInit(details, imageBase),
    metrics: { quantity: uint64(details.quantity), ownerCount: uint64(details.ownerCount) },
    lastSale: details.lastSale && saleInit(details.lastSale),
    rarity: details.rarity && {
      method: RarityMethod.INFORMATION_CONTENT,
      score: details.rarity.score,
      rank: uint64(details.rarity.rank),
      collectionSize: uint64(details.rarity.collectionSize),
      rankedAt: formatTimestamp(details.rarity.rankedAt),
    },
  });
}

/** A string trait; its share is of the collection's `documents` (tokens with a fetched document). */
export function stringTraitMessage(
  trait: StringTrait,
  documents: bigint,
): MessageInitShape<typeof StringTraitSchema> {
  return {
    name: trait.name,
    value: trait.value,
    nftsCount: uint64(trait.tokens),
    nftsPercentage: traitPercentage(trait.tokens, documents),
  };
}

const DISPLAY_TYPE: Readonly<Record<NumericDisplayType, DisplayType>> = {
  DISPLAY_TYPE_STAT: DisplayType.STAT,
  DISPLAY_TYPE_BOOST: DisplayType.BOOST,
  DISPLAY_TYPE_BOOST_PERCENTAGE: DisplayType.BOOST_PERCENTAGE,
  DISPLAY_TYPE_DATE: DisplayType.DATE,
};

export function numericTraitMessage(trait: NumericTrait): MessageInitShape<typeof NumericTraitSchema> {
  return {
    name: trait.name,
    displayType: DISPLAY_TYPE[trait.displayType],
    valueMin: trait.min,
    valueMax: trait.max,
  };
}

export function walletNftMessage(
  holding: WalletNft,
  imageBase = "",
): MessageInitShape<typeof WalletNftSchema> {
  return {
    nft: nftInit(holding, imageBase),
    quantity: uint64(holding.quantity),
    spam: spamVerdictInit(holding.spam),
  };
}

const SPAM_SOURCE: Readonly<Record<SpamSource, SpamVerdictSource>> = {
  none: SpamVerdictSource.NOT_JUDGED,
  computed: SpamVerdictSource.COMPUTED,
  override: SpamVerdictSource.OVERRIDE,
};

/** A collection's spam verdict; evidence figures as strings, as every count on the wire. */
export function spamVerdictInit(verdict: ServedSpamVerdict): MessageInitShape<typeof SpamVerdictSchema> {
  return {
    isSpam: verdict.isSpam,
    score: verdict.score,
    source: SPAM_SOURCE[verdict.source],
    signals: verdict.signals.map((s) => ({
      name: s.name,
      weight: s.weight,
      evidence: Object.entries(s.evidence).map(([name, value]) => ({ name, value: String(value) })),
    })),
  };
}

export function rawMetadataMessage(document: RawDocument | undefined): GetNftRawMetadataResponse {
  return create(GetNftRawMetadataResponseSchema, {
    metadata: document && { raw: document.raw, indexedAt: formatIndexedAt(document.fetchedAtMicros) },
  });
}

/**
 * A collection's metadata. Without stats the figures are what the original service answered
 * without `includeStats`: "0", "0" and an empty volume. The list of links stays empty until
 * collection-level documents are fetched.
 */
export function collectionMetadataMessage(
  facts: CollectionFacts,
  spam: ServedSpamVerdict,
): GetCollectionMetadataResponse {
  const { identity, counts, sales } = facts;
  return create(GetCollectionMetadataResponseSchema, {
    name: identity.name,
    symbol: identity.symbol,
    types: identity.types.map(contractTypeNumber),
    tokensCount: sales === undefined ? 0n : uint64(counts.minted - counts.burned),
    ownersCount: sales === undefined ? 0n : uint64(counts.holders),
    salesVolume: sales === undefined ? "" : formatNative(sales.volume),
    metadata: [],
    spam: spamVerdictInit(spam),
  });
}

/** A collection's totals; `facts` must hold its sales. */
export function collectionTotalsMessage(facts: CollectionFacts): GetCollectionTotalsResponse {
  const { counts, sales } = facts;
  if (sales === undefined) throw new Error("collection totals need the sales");
  return create(GetCollectionTotalsResponseSchema, {
    tokensCount: uint64(counts.minted - counts.burned),
    ownersCount: uint64(counts.holders),
    mintedCount: uint64(counts.minted),
    burnedCount: uint64(counts.burned),
    transfersCount: uint64(counts.transfers),
    salesCount: uint64(sales.sales),
    salesQuantity: uint64(sales.soldUnits),
    salesVolume: formatNative(sales.volume),
    flaggedSalesCount: uint64(sales.flaggedSales),
    flaggedVolume: formatNative(sales.flaggedVolume),
    unpricedSalesCount: uint64(sales.unpricedSales),
  });
}

/**
 * A floor in the native coin, or every price null without one. The dollar price is null: the
 * offer is valued at no rate (see docs/api.md).
 */
export function floorPriceMessage(
  lowestWei: bigint | undefined,
  usdPerWei: Rate | undefined,
): GetFloorPriceResponse {
  return create(GetFloorPriceResponseSchema, {
    price: {
      ...(lowestWei === undefined ? {} : { totalNative: formatNative(lowestWei) }),
      ...(lowestWei === undefined || usdPerWei === undefined
        ? {}
        : { totalUsd: usdValue(lowestWei, usdPerWei) }),
      fungibleAddress: "",
    },
  });
}

/**
 * The store's rows as the API's response messages: pure, and the one place where values take
 * their wire form (amounts from wei, timestamps, enum numbers).
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ContractType as StoreContractType } from "../core/types.ts";
import {
  type GetCollectionMetadataResponse,
  GetCollectionMetadataResponseSchema,
  type GetCollectionTotalsResponse,
  GetCollectionTotalsResponseSchema,
  type OwnerSchema,
  type OwnersCountDataPoint,
  OwnersCountDataPointSchema,
  type PriceDataPoint,
  PriceDataPointSchema,
  type SalesVolumeDataPoint,
  SalesVolumeDataPointSchema,
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
  type SaleSchema,
  type TokenOwnerSchema,
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
import type { SeriesPoint } from "../store/read/series.ts";
import type { ServedSpamVerdict, SpamSource } from "../store/read/spam.ts";
import type { TokenOwner } from "../store/read/token-owners.ts";
import type { Ranked } from "../store/read/top.ts";
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
import { CONTRACT_TYPE, type ContractType, enumNumber, type Metric } from "./params.ts";

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

function saleInit(sale: NftSale): MessageInitShape<typeof SaleSchema> {
  return {
    blockchainEvent: {
      txHash: sale.txHash,
      logIndex: uint64(BigInt(sale.logIndex)),
      seqIndex: uint64(BigInt(sale.seq)),
      blockNumber: uint64(sale.blockNumber),
      blockTimestamp: formatTimestamp(sale.blockTime),
    },
    recipientPaid: {
      totalNative: formatNative(sale.totalNative),
      totalUsd: formatUsd(sale.totalUsd ?? null),
      nativeTransfersTotal: formatNative(sale.nativePaid),
      fungibleTransfersTotal: formatNative(sale.fungiblePaid),
      attributedBy: attributedByNumber(sale.attributedBy),
      // A token whose contract was never seen has no known decimals: its amount stays in base units.
      fungibleTotals: sale.payments.map((p) => ({
        contractAddress: p.token,
        totalNormalized: formatUnits(p.amount, p.decimals ?? 0),
      })),
    },
    flags: sale.flags,
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
  });
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
export function floorPriceMessage(lowestWei: bigint | undefined): GetFloorPriceResponse {
  return create(GetFloorPriceResponseSchema, {
    price: {
      ...(lowestWei === undefined ? {} : { totalNative: formatNative(lowestWei) }),
      fungibleAddress: "",
    },
  });
}

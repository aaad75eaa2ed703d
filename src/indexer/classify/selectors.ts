/**
 * Function selectors and ERC-165 interface ids classification looks for. Spelled out so that
 * classifying needs no hashing; a test recomputes each from its signature.
 */
export const SELECTORS = {
  // ERC-20
  totalSupply: "0x18160ddd", // totalSupply()
  balanceOf: "0x70a08231", // balanceOf(address)
  transfer: "0xa9059cbb", // transfer(address,uint256)
  transferFrom: "0x23b872dd", // transferFrom(address,address,uint256)
  approve: "0x095ea7b3", // approve(address,uint256)
  allowance: "0xdd62ed3e", // allowance(address,address)
  // ERC-721
  ownerOf: "0x6352211e", // ownerOf(uint256)
  safeTransferFrom: "0x42842e0e", // safeTransferFrom(address,address,uint256)
  safeTransferFromWithData: "0xb88d4fde", // safeTransferFrom(address,address,uint256,bytes)
  getApproved: "0x081812fc", // getApproved(uint256)
  setApprovalForAll: "0xa22cb465", // setApprovalForAll(address,bool)
  // Pre-standard NFTs (CryptoKitties and the ERC-721 drafts)
  takeOwnership: "0xb2e6ceeb", // takeOwnership(uint256)
  tokensOfOwner: "0x8462151c", // tokensOfOwner(address)
  // ERC-1155
  safeTransferFrom1155: "0xf242432a", // safeTransferFrom(address,address,uint256,uint256,bytes)
  safeBatchTransferFrom: "0x2eb2c2d6", // safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)
  balanceOfBatch: "0x4e1273f4", // balanceOfBatch(address[],uint256[])
  // CryptoPunks
  punkIndexToAddress: "0x58178168", // punkIndexToAddress(uint256)
  transferPunk: "0x8b72a2ec", // transferPunk(address,uint256)
  buyPunk: "0x8264fe98", // buyPunk(uint256)
  // Metadata and introspection
  name: "0x06fdde03", // name()
  symbol: "0x95d89b41", // symbol()
  decimals: "0x313ce567", // decimals()
  supportsInterface: "0x01ffc9a7", // supportsInterface(bytes4)
} as const;

export const INTERFACE_IDS = {
  erc165: "0x01ffc9a7",
  /** Must be refused by a conforming ERC-165 implementation (EIP-165's second probe). */
  invalid: "0xffffffff",
  erc721: "0x80ac58cd",
  erc1155: "0xd9b67a26",
  /** The ERC-721 draft's id that CryptoKitties answers (XOR of its draft's function selectors). */
  erc721Draft: "0x9a20483d",
} as const;

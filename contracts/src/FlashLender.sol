// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";

/// @notice Lends an NFT for the span of one call and takes it back, as flash-loan and airdrop-claim
/// helpers do: the token leaves its holder and is back within the transaction, which is no sale.
/// Holder and borrower have both approved the lender for the collection.
contract FlashLender {
    error NotReturned();

    function lend(address nft, uint256 tokenId, address borrower) external {
        address holder = IERC721(nft).ownerOf(tokenId);
        IERC721(nft).transferFrom(holder, borrower, tokenId);
        IERC721(nft).transferFrom(borrower, holder, tokenId);
        if (IERC721(nft).ownerOf(tokenId) != holder) revert NotReturned();
    }
}

// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {BidMarket} from "./BidMarket.sol";
import {EscrowMarket} from "./EscrowMarket.sol";

/// @notice An arbitrage bot's contract: within one transaction it buys a listing below a standing
/// bid and accepts that bid, so the NFT goes from the lister through the relay to the bidder. The
/// hop is no sale of its own: the lister sold to the bidder.
contract MevRelay {
    address public immutable owner;

    error NotOwner();

    constructor() {
        owner = msg.sender;
    }

    /// @param nft, tokenId The ERC-721 the listing holds and the bid is for.
    function arbitrage(EscrowMarket market, uint256 listingId, BidMarket bids, uint256 bidId, address nft, uint256 tokenId)
        external
        payable
    {
        if (msg.sender != owner) revert NotOwner();
        market.buy{value: msg.value}(listingId);
        IERC721(nft).approve(address(bids), tokenId);
        bids.acceptBid(bidId);
    }
}

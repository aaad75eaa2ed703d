// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {MarketFees} from "./MarketFees.sol";

/// @notice Offers in an ERC-20 (WETH, or a pool token) that the NFT's owner accepts: the owner
/// sends the transaction, and the market pulls the bidder's tokens straight to the seller, its fee
/// recipient and the royalty recipient. The buyer sends nothing in the sale's transaction.
contract BidMarket is MarketFees {
    using SafeERC20 for IERC20;

    struct Bid {
        address bidder;
        address currency;
        address nft;
        uint256 tokenId;
        uint256 price;
        bool active;
    }

    Bid[] public bids;

    event BidEntered(uint256 indexed bidId, address indexed bidder, address nft, uint256 tokenId, uint256 price);
    event BidAccepted(uint256 indexed bidId, address indexed seller);

    error NotActive();

    constructor(address feeRecipient_, uint16 feeBps_) MarketFees(feeRecipient_, feeBps_) {}

    /// @dev The bidder approves this market for `currency` beforehand; nothing is escrowed.
    function enterBid(address currency, address nft, uint256 tokenId, uint256 price)
        external
        returns (uint256 bidId)
    {
        bidId = bids.length;
        bids.push(Bid(msg.sender, currency, nft, tokenId, price, true));
        emit BidEntered(bidId, msg.sender, nft, tokenId, price);
    }

    function acceptBid(uint256 bidId) external {
        Bid storage bid = bids[bidId];
        if (!bid.active) revert NotActive();
        bid.active = false;
        IERC721(bid.nft).transferFrom(msg.sender, bid.bidder, bid.tokenId);
        (uint256 fee, uint256 royalty, address royaltyRecipient) = _cuts(bid.nft, bid.price);
        IERC20 currency = IERC20(bid.currency);
        currency.safeTransferFrom(bid.bidder, msg.sender, bid.price - fee - royalty);
        if (fee > 0) currency.safeTransferFrom(bid.bidder, feeRecipient, fee);
        if (royalty > 0) currency.safeTransferFrom(bid.bidder, royaltyRecipient, royalty);
        emit BidAccepted(bidId, msg.sender);
    }
}

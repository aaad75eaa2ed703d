// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {IERC1155} from "@openzeppelin/contracts/token/ERC1155/IERC1155.sol";
import {MarketFees} from "./MarketFees.sol";

/// @notice A fixed-price market whose payments pass through it: the buyer pays the market, which
/// pays the seller, its fee recipient and the collection's royalty recipient. A listing may hold
/// several NFTs (ERC-721 and ERC-1155, of any collections) for one price. Sellers approve the
/// market, which moves each NFT straight from the seller to whoever calls `buy`.
contract EscrowMarket is MarketFees {
    using SafeERC20 for IERC20;

    /// @param amount Units of an ERC-1155 id; 0 for an ERC-721 token.
    struct Item {
        address nft;
        uint256 tokenId;
        uint256 amount;
    }

    struct Listing {
        address seller;
        address currency;
        uint256 price;
        bool active;
    }

    Listing[] public listings;
    mapping(uint256 listingId => Item[]) private _items;

    event Listed(uint256 indexed listingId, address indexed seller, address currency, uint256 price);
    event Bought(uint256 indexed listingId, address indexed buyer, uint256 price);

    error NotActive();
    error WrongPayment();
    error PaymentFailed();

    constructor(address feeRecipient_, uint16 feeBps_) MarketFees(feeRecipient_, feeBps_) {}

    /// @param currency The ERC-20 to be paid in, or the zero address for ETH.
    function list(Item[] calldata items, address currency, uint256 price) external returns (uint256 listingId) {
        listingId = listings.length;
        listings.push(Listing(msg.sender, currency, price, true));
        for (uint256 i = 0; i < items.length; ++i) {
            _items[listingId].push(items[i]);
        }
        emit Listed(listingId, msg.sender, currency, price);
    }

    function itemsOf(uint256 listingId) external view returns (Item[] memory) {
        return _items[listingId];
    }

    /// @notice Pays for a listing and takes its NFTs. ETH sent beyond the price is sent back.
    function buy(uint256 listingId) external payable {
        Listing storage listing = listings[listingId];
        if (!listing.active) revert NotActive();
        listing.active = false;
        address seller = listing.seller;
        address currency = listing.currency;
        uint256 price = listing.price;

        if (currency == address(0)) {
            if (msg.value < price) revert WrongPayment();
        } else {
            if (msg.value != 0) revert WrongPayment();
            IERC20(currency).safeTransferFrom(msg.sender, address(this), price);
        }

        Item[] storage items = _items[listingId];
        for (uint256 i = 0; i < items.length; ++i) {
            Item memory item = items[i];
            if (item.amount == 0) IERC721(item.nft).transferFrom(seller, msg.sender, item.tokenId);
            else IERC1155(item.nft).safeTransferFrom(seller, msg.sender, item.tokenId, item.amount, "");
        }

        // A bundle of several collections pays the royalty of its first one.
        (uint256 fee, uint256 royalty, address royaltyRecipient) = _cuts(items[0].nft, price);
        _pay(currency, seller, price - fee - royalty);
        _pay(currency, feeRecipient, fee);
        _pay(currency, royaltyRecipient, royalty);
        if (msg.value > price) _pay(address(0), msg.sender, msg.value - price);
        emit Bought(listingId, msg.sender, price);
    }

    function _pay(address currency, address to, uint256 amount) private {
        if (amount == 0) return;
        if (currency == address(0)) {
            (bool ok,) = to.call{value: amount}("");
            if (!ok) revert PaymentFailed();
        } else {
            IERC20(currency).safeTransfer(to, amount);
        }
    }
}

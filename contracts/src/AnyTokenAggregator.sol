// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {EscrowMarket} from "./EscrowMarket.sol";
import {IUniswapV2PairLike, IWrappedCoin, PairSwap} from "./PairSwap.sol";

/// @notice "Buy with any token": the caller pays the aggregator in a token; the aggregator keeps
/// its fee in that token, swaps the rest for wrapped ETH, unwraps it, buys an ETH listing, hands
/// the NFT on and sends back the ETH left over.
contract AnyTokenAggregator is PairSwap {
    using SafeERC20 for IERC20;

    address public immutable feeRecipient;
    uint256 public immutable feeBps;

    error RefundFailed();

    constructor(address feeRecipient_, uint256 feeBps_) {
        feeRecipient = feeRecipient_;
        feeBps = feeBps_;
    }

    receive() external payable {}

    function buyWithToken(
        IUniswapV2PairLike pair,
        IERC20 tokenIn,
        uint256 amountIn,
        IWrappedCoin wrapped,
        EscrowMarket market,
        uint256 listingId,
        IERC721 nft,
        uint256 tokenId
    ) external {
        tokenIn.safeTransferFrom(msg.sender, address(this), amountIn);
        uint256 fee = (amountIn * feeBps) / 10_000;
        tokenIn.safeTransfer(feeRecipient, fee);
        uint256 out = _swap(pair, tokenIn, address(this), amountIn - fee);
        wrapped.withdraw(out);
        (,, uint256 price,) = market.listings(listingId);
        market.buy{value: price}(listingId);
        nft.transferFrom(address(this), msg.sender, tokenId);
        (bool ok,) = msg.sender.call{value: out - price}("");
        if (!ok) revert RefundFailed();
    }
}

// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {EscrowMarket} from "./EscrowMarket.sol";
import {IUniswapV2PairLike, IWrappedCoin, PairSwap} from "./PairSwap.sol";

/// @notice A swap and an NFT buy in one call, as Uniswap's Universal Router runs them: the
/// caller's tokens go straight to a pair, the pair pays the router wrapped ETH, the router unwraps
/// it, buys an ETH listing, hands the NFT on to the caller and sends back the ETH left over.
contract SwapRouter is PairSwap {
    error RefundFailed();

    receive() external payable {}

    function swapAndBuy(
        IUniswapV2PairLike pair,
        IERC20 tokenIn,
        uint256 amountIn,
        IWrappedCoin wrapped,
        EscrowMarket market,
        uint256 listingId,
        IERC721 nft,
        uint256 tokenId
    ) external {
        uint256 out = _swap(pair, tokenIn, msg.sender, amountIn);
        wrapped.withdraw(out);
        (,, uint256 price,) = market.listings(listingId);
        market.buy{value: price}(listingId);
        nft.transferFrom(address(this), msg.sender, tokenId);
        (bool ok,) = msg.sender.call{value: out - price}("");
        if (!ok) revert RefundFailed();
    }
}

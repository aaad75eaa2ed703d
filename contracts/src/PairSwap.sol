// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

interface IUniswapV2PairLike {
    function getReserves() external view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast);
    function token0() external view returns (address);
    function swap(uint256 amount0Out, uint256 amount1Out, address to, bytes calldata data) external;
}

interface IWrappedCoin {
    function withdraw(uint256 amount) external;
}

/// @notice Swaps through a Uniswap V2 pair the way its periphery does: the input is sent to the
/// pair, and the pair pays out what its constant-product formula (0.3% fee) allows.
abstract contract PairSwap {
    using SafeERC20 for IERC20;

    /// @return out What the pair paid this contract in its other token.
    function _swap(IUniswapV2PairLike pair, IERC20 tokenIn, address payer, uint256 amountIn)
        internal
        returns (uint256 out)
    {
        (uint112 reserve0, uint112 reserve1,) = pair.getReserves();
        bool zeroIn = pair.token0() == address(tokenIn);
        (uint256 reserveIn, uint256 reserveOut) = zeroIn ? (reserve0, reserve1) : (reserve1, reserve0);
        uint256 withFee = amountIn * 997;
        out = (withFee * reserveOut) / (reserveIn * 1000 + withFee);
        if (payer == address(this)) tokenIn.safeTransfer(address(pair), amountIn);
        else tokenIn.safeTransferFrom(payer, address(pair), amountIn);
        pair.swap(zeroIn ? 0 : out, zeroIn ? out : 0, address(this), "");
    }
}

// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Logs the events exchange rates are read from, with the values a test chooses: a Uniswap V2
/// pair's `Sync` and a V3 pool's `Initialize` and `Swap`. No tokens move; only the logged prices matter.
contract TestPriceFeedPair {
    event Sync(uint112 reserve0, uint112 reserve1);
    event Initialize(uint160 sqrtPriceX96, int24 tick);
    event Swap(
        address indexed sender,
        address indexed recipient,
        int256 amount0,
        int256 amount1,
        uint160 sqrtPriceX96,
        uint128 liquidity,
        int24 tick
    );

    function sync(uint112 reserve0, uint112 reserve1) external {
        emit Sync(reserve0, reserve1);
    }

    function swap(uint160 sqrtPriceX96, uint128 liquidity) external {
        emit Swap(msg.sender, msg.sender, 0, 0, sqrtPriceX96, liquidity, 0);
    }
}

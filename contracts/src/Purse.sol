// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @notice A contract wallet holding a buyer's ETH, which pays out whatever its caller asks: it
/// lets one transaction carry payments from many buyers. It guards nothing, so it belongs on
/// throwaway development chains only (where its code is set on the buyer's address directly).
contract Purse {
    error PaymentFailed();

    receive() external payable {}

    function pay(address payable to, uint256 amount) external {
        (bool ok,) = to.call{value: amount}("");
        if (!ok) revert PaymentFailed();
    }
}

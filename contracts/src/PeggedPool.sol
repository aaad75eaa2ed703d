// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @notice An ERC-20 minted 1:1 for the ETH deposited and burnt for it on withdrawal, like Blur's
/// pool token: bids are paid in it, so a sale's price is in a token worth exactly its ETH.
contract PeggedPool is ERC20 {
    error WithdrawFailed();

    constructor() ERC20("Pegged Pool", "POOL") {}

    receive() external payable {
        deposit();
    }

    function deposit() public payable {
        _mint(msg.sender, msg.value);
    }

    function withdraw(uint256 amount) external {
        _burn(msg.sender, amount);
        (bool ok,) = msg.sender.call{value: amount}("");
        if (!ok) revert WithdrawFailed();
    }
}

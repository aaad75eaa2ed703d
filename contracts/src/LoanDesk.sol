// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EscrowMarket} from "./EscrowMarket.sol";
import {IWrappedCoin} from "./PairSwap.sol";

/// @notice Buy now, pay later, as Blur's Blend runs it: the borrower sends part of an ETH
/// listing's price, the desk takes the rest from a lender's wrapped ETH and unwraps it, buys the
/// listing, and keeps the NFT as the loan's collateral.
contract LoanDesk {
    using SafeERC20 for IERC20;

    struct Loan {
        address borrower;
        address lender;
        uint256 amount;
        uint256 listingId;
    }

    Loan[] public loans;

    error WrongPayment();

    receive() external payable {}

    function buyToBorrow(EscrowMarket market, uint256 listingId, IERC20 wrapped, address lender, uint256 loan)
        external
        payable
    {
        (,, uint256 price,) = market.listings(listingId);
        if (msg.value + loan != price) revert WrongPayment();
        wrapped.safeTransferFrom(lender, address(this), loan);
        IWrappedCoin(address(wrapped)).withdraw(loan);
        market.buy{value: price}(listingId);
        loans.push(Loan(msg.sender, lender, loan, listingId));
    }
}

{-# LANGUAGE OverloadedStrings #-}
-- | Billing.
module Acme.Billing
  ( Invoice (..)
  , total
  ) where

import Data.List (foldl')
import qualified Data.Map as Map
import Acme.Support.Money (Money, sumMoney)

-- | An invoice.
data Invoice = Invoice
  { number :: String
  , lines :: [Money]
  } deriving (Show, Eq)

newtype Cents = Cents Int

type Amount = Int

-- | Things that can be billed.
class Billable a where
  bill :: a -> Money

instance Billable Invoice where
  bill i = total i

-- | The sum of the lines.
total :: Invoice -> Money
total inv = sumMoney (lines inv)

main :: IO ()
main = do
  print (total (Invoice "1" []))

-- | Fibonacci numbers, by equations.
fib :: Int -> Int
fib 0 = 0
fib 1 = 1
fib n = fib (n - 1) + fib (n - 2)

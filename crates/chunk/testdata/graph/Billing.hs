module Acme.Billing (total) where

import Data.List (foldl')
import qualified Data.Map as Map
import Acme.Support.Money (Money, sumMoney)
import Acme.Support.Clock

instance Billable Invoice where
  bill i = total i

total :: Invoice -> Money
total inv = sumMoney (lines inv)

lookupRate :: String -> Maybe Int
lookupRate k = Map.lookup k rates

<?php
namespace App\Billing;

use App\Models\Customer;
use Psr\Log\LoggerInterface as Logger;
use App\Support\{Money, Clock as Time};
use function App\Support\format_amount;

class Invoice extends Document implements Billable, \Countable
{
    use Logs;

    public function total(Customer $customer): Money
    {
        $sum = $this->lines->sum();
        $this->log(format_amount($sum));
        return Money::of($sum, new Currency('EUR'));
    }
}

<?php

namespace App\Billing;

use App\Models\Customer;
use Psr\Log\LoggerInterface as Logger;

/**
 * Something that can be billed.
 */
interface Billable
{
    public function amount(): int;
}

trait Logs
{
    protected function log(string $message): void
    {
        $this->logger->info($message);
    }
}

#[Entity]
final class Invoice extends Document implements Billable
{
    use Logs;

    private array $lines = [];

    public function __construct(private Customer $customer)
    {
    }

    /** The sum of the lines. */
    public function amount(): int
    {
        return array_sum($this->lines);
    }

    public static function blank(): self
    {
        return new self(Customer::guest());
    }
}

enum Status: string
{
    case Paid = 'paid';
}

function format_amount(int $cents): string
{
    return number_format($cents / 100, 2);
}

package com.acme.billing

import com.acme.support.Money
import com.acme.support.Clock as Time
import kotlinx.coroutines.*

class Invoice(val lines: List<Money>) : Document(), Billable, Comparable<Invoice> {
    fun total(): Money {
        val sum = Money.sum(lines)
        log(Time.now())
        return Currency("EUR").convert(sum)
    }
}

object Registry : Repository<Invoice> by InMemory()

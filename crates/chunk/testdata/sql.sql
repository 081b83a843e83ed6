-- Customers who can be invoiced.
CREATE TABLE customers (
    id BIGSERIAL PRIMARY KEY,
    email TEXT NOT NULL UNIQUE
);

CREATE TABLE invoices (
    id BIGSERIAL PRIMARY KEY,
    customer_id BIGINT NOT NULL REFERENCES customers (id),
    total_cents INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX invoices_customer ON invoices (customer_id);

CREATE TYPE invoice_status AS ENUM ('open', 'paid');

-- What each customer owes.
CREATE VIEW balances AS
SELECT c.email, sum(i.total_cents) AS owed
FROM customers c
JOIN invoices i ON i.customer_id = c.id
GROUP BY c.email;

CREATE FUNCTION invoice_total(invoice BIGINT) RETURNS INTEGER AS $$
    SELECT total_cents FROM invoices WHERE id = invoice;
$$ LANGUAGE sql;

ALTER TABLE invoices ADD COLUMN status invoice_status NOT NULL DEFAULT 'open';

INSERT INTO customers (email) VALUES ('a@example.com');

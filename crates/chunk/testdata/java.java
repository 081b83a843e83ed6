package bank;

import java.util.List;

/** A bank account. */
public class Account {
    private long balance;

    /** Opens an account. */
    public Account(long balance) {
        this.balance = balance;
    }

    @Override
    public String toString() {
        return "Account(" + balance + ")";
    }

    public interface Listener {
        void changed(long balance);
    }
}

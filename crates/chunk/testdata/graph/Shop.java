package com.acme;

import com.acme.util.Prices;

public class Shop extends Store implements Closeable {
    public int checkout() { Cart cart =
        new Cart();
        return cart.total();
    }
}

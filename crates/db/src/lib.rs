//! The Rowtree database: schema, transactions and mutations over the split map

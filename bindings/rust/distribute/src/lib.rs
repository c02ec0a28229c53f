pub use distribute_sys as sys;

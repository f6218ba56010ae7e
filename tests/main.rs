mod access;
mod policies;

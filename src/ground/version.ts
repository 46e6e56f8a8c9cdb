/** The dashboard interface version the specs declare (info.version). */
export const VERSION = '3.4.0';

import { describe, expect, it } from 'vitest';
import { fileAddressOf, filePathOf } from '../../src/studio/file-address';

describe('fileAddressOf', () => {
  it('one file under another signature or expiry is one address', () => {
    const s3 = (sig: string, date: string) =>
      `https://b.s3.amazonaws.com/u/p.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=k%2F${date}&X-Amz-Date=${date}T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=${sig}`;
    expect(fileAddressOf(s3('aa', '20261128'))).toBe(fileAddressOf(s3('bb', '20261129')));
    expect(fileAddressOf(s3('aa', '20261128'))).toBe('https://b.s3.amazonaws.com/u/p.jpg');
    const sas = (sig: string) =>
      `https://a.blob.core.windows.net/c/r.png?sv=2024-01-01&se=2026-11-28T10%3A00Z&sr=b&sp=r&sig=${sig}`;
    expect(fileAddressOf(sas('x'))).toBe(fileAddressOf(sas('y')));
    expect(fileAddressOf('/results/r1.png?exp=1&sig=a')).toBe(
      fileAddressOf('/results/r1.png?sig=b&exp=2'),
    );
  });

  it('files told apart by their query are two addresses, in any parameter order', () => {
    expect(fileAddressOf('https://h/files/get?id=up_1')).not.toBe(
      fileAddressOf('https://h/files/get?id=up_2'),
    );
    expect(fileAddressOf('https://h/files/get?id=r_1&shot=2&sig=a')).toBe(
      fileAddressOf('https://h/files/get?sig=b&shot=2&id=r_1'),
    );
    expect(filePathOf('https://h/files/get?id=up_1')).toBe('https://h/files/get');
  });
});
